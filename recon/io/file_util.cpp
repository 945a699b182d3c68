#include "recon/io/file_util.hpp"

#include <fcntl.h>
#include <signal.h>
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

std::string cannotWrite(const std::string& target, const std::string& why) {
    return "cannot write '" + target + "': " + why;
}

namespace {
// The name before the extension and the extension, as temporaries are named.
std::pair<std::string, std::string> stemAndExtension(const std::string& path) {
    const std::string ext = extensionOf(path);
    const std::string name = fs::path(path).filename().string();
    return {name.substr(0, name.size() - ext.size()), ext};
}

std::string temporaryNameFor(const std::string& target) {
    static std::atomic<unsigned> counter{0};
    const auto [stem, ext] = stemAndExtension(target);
    const std::string name = "." + stem + ".part-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter.fetch_add(1)) + ext;
    return (fs::path(target).parent_path() / name).string();
}

// The file a chain of symbolic links ends at (which need not exist yet).
std::string resolveLinks(const std::string& target) {
    fs::path p(target);
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
        const fs::path next = fs::read_symlink(p, ec);
        if (ec) throw InputError(cannotWrite(target, "its symbolic link cannot be read: " + ec.message()));
        p = next.is_absolute() ? next : p.parent_path() / next;
    }
    throw InputError(cannotWrite(target, "too many levels of symbolic links"));
}

bool allDigits(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Removes ".<stem>.part-<pid>-<n><ext>" files next to `target` whose process
// is gone (killed during a write); a live process's temporary is its own.
void removeStaleTemporaries(const std::string& target) {
    const auto [stem, ext] = stemAndExtension(target);
    const std::string prefix = "." + stem + ".part-";
    fs::path folder = fs::path(target).parent_path();
    if (folder.empty()) folder = ".";
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() + ext.size() || name.compare(0, prefix.size(), prefix) != 0 ||
            name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
            continue;
        const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - ext.size());
        const auto dash = middle.find('-');
        if (dash == std::string::npos || !allDigits(middle.substr(0, dash)) || !allDigits(middle.substr(dash + 1)) ||
            dash > 9)
            continue;
        const long pid = std::stol(middle.substr(0, dash));
        if (pid <= 0 || pid == long(::getpid())) continue;
        if (::kill(pid_t(pid), 0) == 0 || errno == EPERM) continue;  // alive: maybe writing now
        std::error_code ignored;
        if (fs::is_regular_file(fs::symlink_status(it->path(), ignored))) fs::remove(it->path(), ignored);
    }
}
}  // namespace

AtomicOutput::AtomicOutput(std::string target) : target_(std::move(target)) {
    if (target_.empty()) throw InputError("output file name is empty");
    resolved_ = resolveLinks(target_);
    const fs::path parent = fs::path(resolved_).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw InputError("output '" + target_ + "': folder '" + parent.string() + "' does not exist");
    struct stat st {};
    if (::stat(resolved_.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) throw InputError("output '" + target_ + "' is a folder");
        if (!S_ISREG(st.st_mode)) throw InputError("output '" + target_ + "' exists and is not a regular file");
        if (::access(resolved_.c_str(), W_OK) != 0)
            throw InputError("output '" + target_ + "' exists and is read-only: not replaced");
        keep_mode_ = int(st.st_mode & 07777);
    }
    removeStaleTemporaries(resolved_);
    temp_ = temporaryNameFor(resolved_);
}

AtomicOutput::~AtomicOutput() {
    if (!committed_) ::unlink(temp_.c_str());
}

void AtomicOutput::write(const void* data, std::size_t bytes) {
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw Error(cannotWrite(target_, std::string("cannot create a temporary file: ") + std::strerror(errno)));
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::write(fd, p, bytes);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            ::close(fd);
            throw Error(cannotWrite(target_, std::strerror(err)));
        }
        p += n;
        bytes -= std::size_t(n);
    }
    if (::close(fd) != 0) throw Error(cannotWrite(target_, std::strerror(errno)));
}

void AtomicOutput::syncToDisk() {
    // Data and mode reach the disk before the rename makes them visible under the real name.
    const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(cannotWrite(target_, std::string("temporary file vanished: ") + std::strerror(errno)));
    int err = 0;
    if (keep_mode_ >= 0 && ::fchmod(fd, mode_t(keep_mode_)) != 0) err = errno;
    if (!err && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && !err) err = errno;
    if (err) throw Error(cannotWrite(target_, std::strerror(err)));
}

void AtomicOutput::publish() {
    if (std::rename(temp_.c_str(), resolved_.c_str()) != 0)
        throw Error(cannotWrite(target_, std::string("rename failed: ") + std::strerror(errno)));
    committed_ = true;
    // The rename itself is made durable with the folder; the file is in place either way.
    const fs::path parent = fs::path(resolved_).parent_path();
    const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

void AtomicOutput::commit() {
    syncToDisk();
    publish();
}

void commitAll(std::vector<AtomicOutput*> outputs) {
    for (AtomicOutput* o : outputs) o->syncToDisk();
    for (AtomicOutput* o : outputs) o->publish();
}

void writeFileAtomically(const std::string& target, const void* data, std::size_t bytes) {
    AtomicOutput out(target);
    out.write(data, bytes);
    out.commit();
}

void writeTextAtomically(const std::string& path, const std::string& text) { writeFileAtomically(path, text.data(), text.size()); }

bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t* out) {
    return !__builtin_mul_overflow(a, b, out);
}

}  // namespace recon::io
