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
// it over the target; if commit() is never reached the temporary is removed.
class AtomicOutput {
public:
    explicit AtomicOutput(std::string target);
    ~AtomicOutput();
    AtomicOutput(const AtomicOutput&) = delete;
    AtomicOutput& operator=(const AtomicOutput&) = delete;

    const std::string& path() const { return temp_; }     // write here
    const std::string& target() const { return target_; }
    void commit();

private:
    std::string target_, temp_;
    bool committed_ = false;
};

// Commits several outputs together (BART's .cfl and .hdr): every temporary is
// written first, then all are renamed; the data file before its header so a
// reader never sees a header without its data.
void commitAll(std::vector<AtomicOutput*> outputs);

// `text` as the whole of `path`, through an AtomicOutput: readers see the old
// file or the new one, never half of it.
void writeTextAtomically(const std::string& path, const std::string& text);

// Bytes written with ordinary stdio, with errors turned into recon::Error.
void writeBytes(const std::string& path, const void* data, std::size_t bytes);

// Checked arithmetic for sizes declared by files: false on overflow.
bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t* out);

}  // namespace recon::io
