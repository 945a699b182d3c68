// Thin RAII and checking helpers over HDF5's C API, shared by our own layout
// and the ISMRMRD reader; failures become messages naming file and dataset.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "recon/core/types.hpp"

namespace recon::io::h5 {

// Every use of libhdf5 in our code happens under one Hdf5Session: it holds the one
// process-wide HDF5 lock (Debian's serial libhdf5 is not thread-safe) and silences
// HDF5's own stderr printing. Writers hold it while they write; readers run in a
// child process forked while it is held (isolated_read.hpp), so no thread of ours is
// inside libhdf5 in the copy. The child must not take it again: its copy of the lock
// stays held by a thread that does not exist there.
class Hdf5Session {
public:
    Hdf5Session();
    ~Hdf5Session();
    Hdf5Session(const Hdf5Session&) = delete;
    Hdf5Session& operator=(const Hdf5Session&) = delete;

private:
    std::unique_lock<std::recursive_mutex> lock_;
    H5E_auto2_t old_func_ = nullptr;
    void* old_data_ = nullptr;
};

// Owns one HDF5 identifier and closes it with the right function.
class Handle {
public:
    using Closer = herr_t (*)(hid_t);
    Handle() = default;
    Handle(hid_t id, Closer close) : id_(id), close_(close) {}
    ~Handle() { reset(); }
    Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) {
            reset();
            id_ = o.id_;
            close_ = o.close_;
            o.id_ = H5I_INVALID_HID;
        }
        return *this;
    }
    hid_t get() const { return id_; }
    bool valid() const { return id_ >= 0; }
    void reset() {
        if (id_ >= 0 && close_) close_(id_);
        id_ = H5I_INVALID_HID;
    }
    // Hands the identifier to an owner that closes it itself.
    hid_t release() {
        const hid_t id = id_;
        id_ = H5I_INVALID_HID;
        return id;
    }
    // Closes now and reports failure (a file close flushes, so it can fail).
    bool close() {
        const bool ok = id_ < 0 || !close_ || close_(id_) >= 0;
        id_ = H5I_INVALID_HID;
        return ok;
    }

private:
    hid_t id_ = H5I_INVALID_HID;
    Closer close_ = nullptr;
};

// The innermost description on HDF5's error stack ("" when empty).
std::string lastError();
// "<what> (HDF5: <cause>)", or `what` alone when HDF5 recorded no cause.
std::string withCause(const std::string& what);

// Opens an existing file read-only after checking it is a readable HDF5 file;
// throws InputError "<what> '<path>': ..." otherwise.
Handle openReadOnly(const std::string& path, const std::string& what);
Handle createFile(const std::string& path);  // truncates
Handle openReadWrite(const std::string& path);
// Writers build their file in memory (HDF5's core driver, nothing on disk) and
// write its bytes themselves through AtomicOutput, every write checked: HDF5
// itself never meets a full disk, after which it can neither close the file
// nor shut down cleanly. `name` only names the file in HDF5's messages.
Handle createInMemory(const std::string& name);
Handle openInMemory(const std::string& name, const std::string& bytes);  // to update a file
std::string fileImage(hid_t file);  // the bytes of a file made so

bool exists(hid_t loc, const std::string& path);  // every component checked, no error on absence
bool isGroup(hid_t loc, const std::string& path);
bool isDataset(hid_t loc, const std::string& path);

// Where messages point: "file 'a.h5', dataset /dataset/kspace".
struct Place {
    std::string file, object;
    std::string str() const { return "file '" + file + "', " + object; }
};

// Shape of an existing dataset, checked: a simple dataspace of rank <= 8.
struct Shape {
    std::vector<hsize_t> dims;
    std::uint64_t elements() const;
    std::string str() const;  // "64 x 1024"
};
Shape shapeOf(hid_t dataset, const Place& where);
Handle openDataset(hid_t loc, const std::string& path, const Place& where);

// Reads a whole numeric dataset as double (any integer or float type), or a
// complex one (a compound of two floats named r/i, real/imag or re/im; a
// real dataset reads with zero imaginary part). Throws InputError on wrong
// types or a failed read (a truncated or corrupt file).
std::vector<double> readReal(hid_t dataset, const Place& where, std::uint64_t elements);
ComplexArray readComplex(hid_t dataset, const Place& where, std::uint64_t elements);
bool isComplexType(hid_t dataset);
// True when every member of a compound type lies inside it and no two overlap:
// libhdf5 1.10's compound conversion reads freed memory or faults on damaged layouts.
bool membersInsideAndApart(hid_t compound);

// Attributes (on any object). Absent attributes return false / the fallback.
bool hasAttribute(hid_t obj, const std::string& name);
std::string readStringAttribute(hid_t obj, const std::string& name, const Place& where, const std::string& fallback);
std::vector<double> readNumericAttribute(hid_t obj, const std::string& name, const Place& where,
                                         std::size_t expected_count);

void writeAttribute(hid_t obj, const std::string& name, const std::string& value);
void writeAttribute(hid_t obj, const std::string& name, const std::vector<double>& values);
void writeAttribute(hid_t obj, const std::string& name, const std::vector<std::int64_t>& values);

Handle createGroup(hid_t loc, const std::string& name);
// Row-major dims (slowest first, as HDF5 and h5py show them).
void writeReal(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const double* data);
void writeComplex(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const cdouble* data);

// Throws recon::Error naming `what` and HDF5's own explanation when status < 0.
void check(herr_t status, const std::string& what);
hid_t checkId(hid_t id, const std::string& what);

// Now in UTC as ISO 8601 ("2026-11-24T02:30:00Z"): the layouts' "created" attributes.
std::string utcTimestamp();

}  // namespace recon::io::h5
