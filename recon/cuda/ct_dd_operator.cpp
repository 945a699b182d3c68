// The GPU DD projector as a LinearOperator on the CUDA backend's complex vectors.
#include <memory>
#include <string>

#include "recon/cuda/ct_dd.hpp"
#include "recon/cuda/cuda_backend.hpp"

namespace recon::cuda {
namespace {

class CudaDdOperator final : public LinearOperator {
public:
    CudaDdOperator(VectorSpace& space, const ct::CtGeometry& geometry, const ct::ProjectorOptions& options,
                   cudaStream_t stream)
        : LinearOperator(space, geometry.volume.voxels(), geometry.beam.samples(),
                         options.interpolation == ct::DdInterpolation::Hardware
                             ? "branchless DD projector (GPU, texture interpolation)"
                             : "branchless DD projector (GPU, software interpolation)"),
          own_stream_(stream ? nullptr : std::make_unique<Stream>()),
          dd_(geometry, options.interpolation, stream ? stream : own_stream_->get()),
          flag_(1, "CT DD flag") {
        check(cudaGetDevice(&device_), "CT DD projector");
    }

private:
    void applyForward(const Vector& x, Vector& y) const override { apply(x, y, true); }
    void applyAdjoint(const Vector& y, Vector& x) const override { apply(y, x, false); }

    void apply(const Vector& in, Vector& out, bool forward) const {
        DeviceGuard guard(device_);
        if (own_stream_) space().synchronize();  // the backend's vector work runs on its own stream
        if (dynamic_cast<const DeviceStorage<float>*>(in.storage()))
            applyTyped<float>(in, out, forward);
        else
            applyTyped<double>(in, out, forward);
        if (own_stream_) check(cudaStreamSynchronize(dd_.stream()), "CT DD projector");
    }

    template <class T>
    void applyTyped(const Vector& in, Vector& out, bool forward) const {
        const cudaStream_t s = dd_.stream();
        const std::size_t n_in = in.size(), n_out = out.size();
        if (part_in_.size() < n_in) part_in_ = DeviceBuffer<float>(n_in, "CT DD input part");
        if (re_out_.size() < n_out) re_out_ = DeviceBuffer<float>(n_out, "CT DD output (real part)");
        const std::complex<T>* z = devicePointer<T>(in);
        auto run = [&](float* result) {
            if (forward)
                dd_.project(part_in_.data(), result);
            else
                dd_.backproject(part_in_.data(), result);
        };
        detail::complexPartToFloat<T>(z, false, part_in_.data(), n_in, s);
        run(re_out_.data());
        // The imaginary part costs a second projection only where it is not all zero.
        const float* im = nullptr;
        if (detail::anyImaginary<T>(z, n_in, flag_.data(), s)) {
            if (im_out_.size() < n_out) im_out_ = DeviceBuffer<float>(n_out, "CT DD output (imaginary part)");
            detail::complexPartToFloat<T>(z, true, part_in_.data(), n_in, s);
            run(im_out_.data());
            im = im_out_.data();
        }
        detail::floatsToComplex<T>(re_out_.data(), im, devicePointer<T>(out), n_out, s);
    }

    std::unique_ptr<Stream> own_stream_;
    mutable CudaDdProjector dd_;
    mutable DeviceBuffer<float> part_in_, re_out_, im_out_;
    mutable DeviceBuffer<int> flag_;
    int device_ = 0;
};

}  // namespace

LinearOperatorPtr cudaDdProjector(VectorSpace& cuda_space, const ct::CtGeometry& geometry,
                                  const ct::ProjectorOptions& options, cudaStream_t stream) {
    return std::make_shared<CudaDdOperator>(cuda_space, geometry, options, stream);
}

}  // namespace recon::cuda
