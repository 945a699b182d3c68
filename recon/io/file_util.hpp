// Small file helpers shared by every reader and writer: extensions, size
// checks before anything is allocated, and the temporary-file-then-rename
// discipline that keeps a failed or cancelled write from leaving half a file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace recon::io {

// The extension in lower case with its dot (".h5", ".nii.gz"), or "".
std::string extensionOf(const std::string& path);
bool hasExtension(const std::string& path, const std::vector<std::string>& extensions);

// Size in bytes of a regular file; throws InputError "<what> '<path>': ..." when
// it is missing, not a regular file or unreadable.
std::uint64_t regularFileSize(const std::string& path, const std::string& what);
// The whole file (for small text files such as BART headers), at most max_bytes.
std::string readSmallFile(const std::string& path, const std::string& what, std::size_t max_bytes);

// A temporary file next to `target` (same folder, so the rename is atomic on one
// file system) whose name keeps the target's extension (libraries such as
// nifti_clib pick the format from it). commit() flushes it to disk and renames
// it over the target; if commit() is never reached the temporary is removed, and
// the target is untouched. A target that is a symbolic link is written through
// to the file it names (the link stays); an existing target keeps its
// permissions. Temporaries of this naming for the same target that a killed
// run left behind (their process is gone) are removed on the next write.
class AtomicOutput {
public:
    explicit AtomicOutput(std::string target);
    ~AtomicOutput();
    AtomicOutput(const AtomicOutput&) = delete;
    AtomicOutput& operator=(const AtomicOutput&) = delete;

    const std::string& path() const { return temp_; }     // write here
    const std::string& target() const { return target_; } // as the user named it
    // Writes the temporary's whole content; every write and the close are checked.
    void write(const void* data, std::size_t bytes);
    void commit();

private:
    friend void commitAll(std::vector<AtomicOutput*> outputs);
    void syncToDisk();  // the target's mode, then fsync: nothing is visible yet
    void publish();     // the rename, then the folder's fsync

    std::string target_, resolved_, temp_;
    int keep_mode_ = -1;  // the existing target's permission bits
    bool committed_ = false;
};

// Commits several outputs together (BART's .cfl and .hdr): every temporary is
// written and synced first, then all are renamed; the data file before its
// header so a reader never sees a header without its data.
void commitAll(std::vector<AtomicOutput*> outputs);

// `text` as the whole of `path`, through an AtomicOutput: readers see the old
// file or the new one, never half of it.
void writeTextAtomically(const std::string& path, const std::string& text);

// A whole file written through AtomicOutput (CSV, JSON and other small outputs).
void writeFileAtomically(const std::string& target, const void* data, std::size_t bytes);

// "cannot write '<target>': <why>", the one wording of every failed write.
std::string cannotWrite(const std::string& target, const std::string& why);

// Checked arithmetic for sizes declared by files: false on overflow.
bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t* out);

}  // namespace recon::io
