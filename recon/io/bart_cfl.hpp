// BART's .cfl/.hdr arrays: a text header ("# Dimensions" then up to 16 sizes)
// and the raw data, complex float32 in the machine's byte order, first
// dimension fastest. A name may be given with or without .cfl/.hdr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "recon/io/file_util.hpp"

#include "recon/core/types.hpp"

namespace recon::io {

inline constexpr int kBartMaxDims = 16;  // BART's DIMS

struct CflArray {
    std::vector<long> dims;  // as declared, trailing ones included
    std::vector<cfloat> data;

    long dim(int i) const { return i < int(dims.size()) ? dims[std::size_t(i)] : 1; }
    std::size_t elements() const { return data.size(); }
    std::string describe() const;  // "3x128x201" (trailing ones dropped)
};

// "x", "x.cfl", "x.hdr" -> "x".
std::string cflBase(const std::string& name);
// Parses a header's text; throws InputError prefixed with `origin`.
std::vector<long> parseCflHeader(const std::string& text, const std::string& origin);
// Reads base.hdr and checks base.cfl's size against it, without reading data:
// the array's dims (data left empty). `what` names the array in messages.
CflArray readCflHeader(const std::string& name, const std::string& what = "BART array");
// Reads base.hdr and base.cfl, checking the data file's size against the header
// before reading it.
CflArray readCfl(const std::string& name, const std::string& what = "BART array");
// Writes base.cfl and base.hdr atomically (both temporaries, then renames).
void writeCfl(const std::string& name, const std::vector<long>& dims, const std::vector<cfloat>& data);
// Several arrays written together (a data set's trajectory, k-space, weights):
// add() writes each array's temporaries, commit() renames them all; if any write
// fails, none of the old files is replaced.
class CflGroupWriter {
public:
    void add(const std::string& name, const std::vector<long>& dims, const std::vector<cfloat>& data);
    void commit();

private:
    std::vector<std::unique_ptr<AtomicOutput>> outputs_;
};

// Shorthands for images on our grids: dims (n_x, n_y, n_z).
void writeCflImage(const std::string& name, const Grid& grid, const ComplexArray& image);
ComplexArray readCflImage(const std::string& name, Grid* grid, const std::string& what = "image");

}  // namespace recon::io
