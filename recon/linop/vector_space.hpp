// Vectors resident on a backend and the operations on them that every solver
// and every operator written from other operators needs. A backend implements
// VectorSpace once (host memory, device memory); operators, solvers and the
// runner are written against it and work on every backend unchanged.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "recon/core/types.hpp"

namespace recon {

// A backend's storage for one complex vector (host array, device buffer).
class VectorStorage {
public:
    virtual ~VectorStorage() = default;
    virtual std::size_t size() const = 0;
};

// A complex vector in a backend's memory: move-only, like the memory it holds.
// Only the VectorSpace that made it reads its storage.
class Vector {
public:
    Vector() = default;
    explicit Vector(std::unique_ptr<VectorStorage> s) : storage_(std::move(s)) {}
    std::size_t size() const { return storage_ ? storage_->size() : 0; }
    bool empty() const { return size() == 0; }
    VectorStorage* storage() const { return storage_.get(); }

private:
    std::unique_ptr<VectorStorage> storage_;
};

// A real sparse matrix (CSR) uploaded to a backend, for VectorSpace::sparseMultiply.
class SparseStorage {
public:
    virtual ~SparseStorage() = default;
    virtual std::int64_t rows() const = 0;
    virtual std::int64_t cols() const = 0;
};
struct CsrMatrix;

// Which product of a linear operator A a primitive computes: A x, A^H x or A^H A x.
enum class Product { Forward, Adjoint, Normal };

class VectorSpace {
public:
    virtual ~VectorSpace() = default;

    virtual Vector make(std::size_t n) = 0;  // zeroed
    virtual void upload(const ComplexArray& host, Vector& v) = 0;  // v must have host.size() values
    virtual void download(const Vector& v, ComplexArray& host) = 0;
    virtual void copy(const Vector& from, Vector& to) = 0;
    // to[to_offset + i] = from[from_offset + i], i < count: what stacking needs.
    virtual void copyRange(const Vector& from, std::size_t from_offset, Vector& to, std::size_t to_offset,
                           std::size_t count) = 0;
    virtual void zero(Vector& v) = 0;
    virtual void scale(cdouble a, Vector& y) = 0;                           // y *= a
    virtual void axpy(double a, const Vector& x, Vector& y) = 0;            // y += a x
    virtual void xpby(const Vector& x, double b, Vector& y) = 0;            // y = x + b y
    virtual void combine(const std::vector<double>& w, const std::vector<const Vector*>& xs, Vector& y) = 0;
    // y = d .* x (or conj(d) .* x), element by element; y may be x.
    virtual void multiply(const Vector& d, const Vector& x, Vector& y, bool conjugate_d = false) = 0;
    virtual cdouble dot(const Vector& a, const Vector& b) = 0;              // a^H b, accumulated in float64
    // a^H b_k for several b_k in one pass over a (one round trip on a GPU).
    virtual std::vector<cdouble> dots(const Vector& a, const std::vector<const Vector*>& bs) = 0;
    virtual double axpyNorm2(double a, const Vector& x, Vector& y) = 0;     // y += a x; returns ||y||^2
    // y += sum_k a_k x_k with complex a_k (a solver's step in a small basis, e.g. CG's kept
    // directions). Here: two real combinations and a scale; a backend may do it in one pass.
    virtual void axpys(const std::vector<cdouble>& a, const std::vector<const Vector*>& xs, Vector& y) {
        std::vector<double> re, im;
        for (const cdouble& v : a) {
            re.push_back(v.real());
            im.push_back(v.imag());
        }
        Vector t = make(y.size());
        combine(re, xs, t);
        axpy(1.0, t, y);
        combine(im, xs, t);
        scale(cdouble(0, 1), t);
        axpy(1.0, t, y);
    }
    // a_k^H b_k for several pairs of equal-length vectors in one pass (one round trip on a GPU, where
    // every reduction that the host waits for stalls the queue): a solver's scalars of one step at once.
    // Here: one dot() per pair; the backends fuse them.
    using VectorPair = std::pair<const Vector*, const Vector*>;
    virtual std::vector<cdouble> dotPairs(const std::vector<VectorPair>& pairs) {
        std::vector<cdouble> out;
        for (const auto& [a, b] : pairs) out.push_back(dot(*a, *b));
        return out;
    }

    // Proximal steps of the sparse priors. Values come in groups: value i + k * stride (k < group)
    // of a vector of group * stride values belongs to group i (isotropic TV: the components of one
    // voxel's gradient, at the stride of one axis' block). groupSoftThreshold shrinks each group's
    // Euclidean norm by t: y_g = x_g max(0, 1 - t / ||x_g||), the prox of t sum_g ||x_g||_2;
    // group 1 is the complex soft threshold. y may be x.
    virtual void groupSoftThreshold(const Vector& x, std::size_t group, double t, Vector& y) = 0;
    // sum_g ||x_g||_2, accumulated in float64 (group 1: the l1 norm sum_i |x_i|).
    virtual double groupNorm1(const Vector& x, std::size_t group) = 0;

    // Matrix-free stencils of the sparse priors' transforms (recon/priors), on an image of
    // grid.voxels() values (x fastest). Shapes are checked here, once for every backend.
    //
    // gradient: D, the forward differences along each axis of `grid`, one block of V = voxels()
    // values per axis: (D x)[a V + v] = x[v + e_a] - x[v], and 0 where v is the last voxel along
    // axis a (no wrap-around: it would couple opposite edges). With `weights` (D's output size; the
    // anatomical edge weights) the operator is diag(w) D. Forward: y = w .* D x; Adjoint:
    // y = D^T (conj(w) .* x) (a divergence); Normal: y = D^T (|w|^2 .* D x), in one pass. y must not be x.
    void gradient(const Grid& grid, const Vector* weights, Product p, const Vector& x, Vector& y);
    // One level of a periodic orthogonal wavelet transform along `axis` on the box [0, box) of an
    // image on `grid`: analysis turns each line of the box along the axis (length L, even, >= the
    // filter's length) into L/2 low-pass values, output j = sum_k h[k] x[(2j + k) mod L], then L/2
    // high-pass ones with g[k] = (-1)^k h[K-1-k]; `inverse` applies the transpose (synthesis).
    // Inside [0, extent) (which holds the box) and outside the box y = x; beyond `extent` y is left
    // as it is, so a chain of levels copies only what the last level changed. y must not be x.
    void waveletLevel(const Grid& grid, int axis, const std::array<int, 3>& box, const std::array<int, 3>& extent,
                      const std::vector<double>& lowpass, bool inverse, const Vector& x, Vector& y);
    static constexpr std::size_t kMaxWaveletTaps = 8;
    // The multilevel Haar transform W that splits axis a at its first splits[a] levels (level l splits,
    // in axis order, every axis with l < splits[a] on the low-pass box that the levels before left;
    // waveletLevels' Haar chain) never mixes voxels of different tiles of 2^splits[a] voxels along each
    // axis, so these two fuse all of its levels in one pass over the image (a tile at a time in fast
    // memory), the cyclic shift P of cyclicShift by `offset` ((P x)[i] = x[(i - offset) mod n]) folded
    // into the indexing:
    // haarShrink: y = P^H W^H soft(W P x, t), the prox of t ||W P .||_1 (y may be x);
    // haarNorm1: the mean of ||W P x||_1 over the shifts by `offsets` (at least one), in float64.
    // Each grid axis must be a multiple of its tile, and a tile at most kMaxHaarTile voxels.
    void haarShrink(const Grid& grid, const std::array<int, 3>& splits, std::size_t offset, double t, const Vector& x, Vector& y);
    double haarNorm1(const Grid& grid, const std::array<int, 3>& splits, const std::vector<std::size_t>& offsets, const Vector& x);
    static constexpr std::size_t kMaxHaarTile = 4096;

    virtual std::shared_ptr<const SparseStorage> uploadSparse(const CsrMatrix& a) = 0;
    virtual void sparseMultiply(const SparseStorage& a, const Vector& x, Vector& y) = 0;  // y = A x

    // x = max(Re x, 0), the imaginary part dropped: the non-negativity constraint of real images
    // (OS-SART's). Through the host here; a backend may override it with a kernel.
    virtual void clampNonNegative(Vector& x) {
        ComplexArray h;
        download(x, h);
        for (cdouble& v : h) v = cdouble(v.real() > 0 ? v.real() : 0.0, 0.0);
        upload(h, x);
    }

    // Lets a backend (or its operators) finish queued work before the host reads a result.
    virtual void synchronize() {}

    // Direct copies between this space and another backend's, issued on this space's queue
    // (peer copies between GPUs). False: no direct path; the caller goes through host memory
    // (linop/distributed_stack.cpp). The other space's work on its vector must be finished
    // (its synchronize()) before either call.
    // pullFrom: mine = theirs, ordered before this space's later work.
    virtual bool pullFrom(VectorSpace& /*other*/, const Vector& /*theirs*/, Vector& /*mine*/) { return false; }
    // pushTo: theirs = mine, complete when it returns.
    virtual bool pushTo(const Vector& /*mine*/, VectorSpace& /*other*/, Vector& /*theirs*/) { return false; }

protected:
    // The stencils above, their arguments checked.
    virtual void applyGradient(const Grid& grid, const Vector* weights, Product p, const Vector& x, Vector& y) = 0;
    virtual void applyWaveletLevel(const Grid& grid, int axis, const std::array<int, 3>& box,
                                   const std::array<int, 3>& extent, const std::vector<double>& lowpass, bool inverse,
                                   const Vector& x, Vector& y) = 0;
    virtual void applyHaarShrink(const Grid& grid, const std::array<int, 3>& splits, std::size_t offset, double t,
                                 const Vector& x, Vector& y) = 0;
    virtual double applyHaarNorm1(const Grid& grid, const std::array<int, 3>& splits, const std::vector<std::size_t>& offsets,
                                  const Vector& x) = 0;

public:
    // Helpers built on the above.
    Vector fromHost(const ComplexArray& host) {
        Vector v = make(host.size());
        upload(host, v);
        return v;
    }
    ComplexArray toHost(const Vector& v) {
        ComplexArray h;
        download(v, h);
        return h;
    }
    double norm2(const Vector& v) { return dot(v, v).real(); }
    void softThreshold(const Vector& x, double t, Vector& y) { groupSoftThreshold(x, 1, t, y); }
    double norm1(const Vector& x) { return groupNorm1(x, 1); }
};

}  // namespace recon
