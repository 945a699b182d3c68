#include "recon/io/file_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "recon/core/errors.hpp"

namespace recon::io {
namespace fs = std::filesystem;

std::string extensionOf(const std::string& path) {
    std::string name = fs::path(path).filename().string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const char* two : {".nii.gz"})
        if (name.size() > std::strlen(two) && name.compare(name.size() - std::strlen(two), std::string::npos, two) == 0)
            return two;
    const auto dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0) return "";
    return name.substr(dot);
}

bool hasExtension(const std::string& path, const std::vector<std::string>& extensions) {
    const std::string ext = extensionOf(path);
    return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

std::uint64_t regularFileSize(const std::string& path, const std::string& what) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw InputError(what + " '" + path + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw InputError(what + " '" + path + "': not a regular file");
    if (::access(path.c_str(), R_OK) != 0) throw InputError(what + " '" + path + "': not readable");
    return std::uint64_t(st.st_size);
}

std::string readSmallFile(const std::string& path, const std::string& what, std::size_t max_bytes) {
    const std::uint64_t size = regularFileSize(path, what);
    if (size > max_bytes)
        throw InputError(what + " '" + path + "': " + std::to_string(size) + " bytes, more than the " +
                         std::to_string(max_bytes) + " such a file can have");
    std::ifstream in(path, std::ios::binary);
    std::string text(size, '\0');
    if (!in.read(text.data(), std::streamsize(size))) throw InputError(what + " '" + path + "': read failed");
    return text;
}

namespace {
std::string temporaryNameFor(const std::string& target) {
    static std::atomic<unsigned> counter{0};
    const fs::path p(target);
    const std::string ext = extensionOf(target);
    std::string stem = p.filename().string();
    stem = stem.substr(0, stem.size() - ext.size());
    const std::string name = "." + stem + ".part-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter.fetch_add(1)) + ext;
    return (p.parent_path() / name).string();
}
}  // namespace

AtomicOutput::AtomicOutput(std::string target) : target_(std::move(target)) {
    if (target_.empty()) throw InputError("output file name is empty");
    const fs::path parent = fs::path(target_).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw InputError("output '" + target_ + "': folder '" + parent.string() + "' does not exist");
    if (fs::is_directory(target_, ec)) throw InputError("output '" + target_ + "' is a folder");
    temp_ = temporaryNameFor(target_);
}

AtomicOutput::~AtomicOutput() {
    if (!committed_) ::unlink(temp_.c_str());
}

void AtomicOutput::commit() {
    // Flush the data before the rename makes it visible under the real name.
    const int fd = ::open(temp_.c_str(), O_RDONLY);
    if (fd < 0) throw Error("cannot write '" + target_ + "': temporary file vanished: " + std::strerror(errno));
    const int sync_status = ::fsync(fd);
    ::close(fd);
    if (sync_status != 0) throw Error("cannot write '" + target_ + "': " + std::strerror(errno));
    if (std::rename(temp_.c_str(), target_.c_str()) != 0)
        throw Error("cannot write '" + target_ + "': rename failed: " + std::strerror(errno));
    committed_ = true;
}

void commitAll(std::vector<AtomicOutput*> outputs) {
    for (AtomicOutput* o : outputs) o->commit();
}

void writeBytes(const std::string& path, const void* data, std::size_t bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw Error("cannot create '" + path + "': " + std::strerror(errno));
    const std::size_t written = bytes ? std::fwrite(data, 1, bytes, f) : 0;
    const bool ok = written == bytes && std::fflush(f) == 0;
    const int err = errno;
    if (std::fclose(f) != 0 || !ok)
        throw Error("cannot write '" + path + "': " + std::strerror(err ? err : EIO));
}

void writeTextAtomically(const std::string& path, const std::string& text) {
    AtomicOutput out(path);
    writeBytes(out.path(), text.data(), text.size());
    out.commit();
}

bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t* out) {
    return !__builtin_mul_overflow(a, b, out);
}

}  // namespace recon::io
