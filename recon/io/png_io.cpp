// One slice as an 8-bit grey PNG (libpng's simplified API). Magnitude is
// windowed from 0 to the volume's maximum, so slices of one volume compare.
// Columns follow the first in-plane axis (left to right), rows the second with
// its highest index at the top (so +y, +z point up as in the data panel).
#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "recon/core/errors.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/formats.hpp"

namespace recon::io {

void writePng(const std::string& path, const Grid& grid, const ComplexArray& image, const ImageWriteOptions& opts) {
    if (image.size() != grid.voxels())
        throw Error("writeImage: " + std::to_string(image.size()) + " voxels for grid " + grid.describe());
    const int axis = grid.dims == 2 ? 2 : opts.slice_axis;
    if (axis < 0 || axis > 2) throw InputError("PNG slice axis " + std::to_string(axis) + " (expected 0, 1 or 2)");
    const int slice = opts.slice < 0 ? grid.n[axis] / 2 : opts.slice;
    if (slice >= grid.n[axis])
        throw InputError("PNG slice " + std::to_string(slice) + " is outside the " + std::to_string(grid.n[axis]) +
                         " slices along axis " + std::to_string(axis));
    const int u = axis == 0 ? 1 : 0;  // first in-plane axis
    const int v = axis == 2 ? 1 : 2;  // second in-plane axis
    const int width = grid.n[u], height = grid.n[v];
    double peak = 0;
    for (const cdouble& x : image) peak = std::max(peak, std::abs(x));
    std::vector<png_byte> pixels(std::size_t(width) * height);
    for (int row = 0; row < height; ++row)
        for (int col = 0; col < width; ++col) {
            std::array<int, 3> at{};
            at[std::size_t(axis)] = slice;
            at[std::size_t(u)] = col;
            at[std::size_t(v)] = height - 1 - row;
            const double m = std::abs(image[grid.index(at[0], at[1], at[2])]);
            pixels[std::size_t(row) * width + col] =
                png_byte(peak > 0 ? std::clamp(std::lround(255.0 * m / peak), 0L, 255L) : 0);
        }
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = png_uint_32(width);
    img.height = png_uint_32(height);
    img.format = PNG_FORMAT_GRAY;
    // Encoded in memory, then written with every write checked (AtomicOutput).
    png_alloc_size_t size = 0;
    std::vector<png_byte> encoded;
    bool ok = png_image_write_to_memory(&img, nullptr, &size, 0, pixels.data(), width, nullptr);
    if (ok) {
        encoded.resize(size);
        ok = png_image_write_to_memory(&img, encoded.data(), &size, 0, pixels.data(), width, nullptr);
    }
    if (!ok) {
        const std::string why = img.message;
        png_image_free(&img);
        throw Error(cannotWrite(path, "PNG encoding failed: " + why));
    }
    AtomicOutput out(path);
    out.write(encoded.data(), size);
    out.commit();
}

}  // namespace recon::io
