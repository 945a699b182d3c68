// The records' data term ||A x - d||^2 (recon/core/iteration_record.hpp), one rule for every solver.
// The solvers keep x^H A^H A x and Re x^H A^H d at no cost (CG's products; A^H A the Toeplitz normal),
// so the expanded form x^H A^H A x - 2 Re x^H A^H d + ||d||^2 needs no Fourier work. But each of its
// terms is only as accurate as the products (the NUFFT's tolerance, float32 sums: ~1e-4 relative in
// the worst case measured), so where the fit is good (noiseless or low-noise data, large grids) the
// difference falls below its own error and is noise or clamped to 0 (docs/SPARSE.md "The records'
// data term"). There, when d is known, an exact record (IterativeAlgorithm::exactRecord: the last
// one of every run, every one with RunOptions::exact_data_term) computes it directly: one forward
// application and a norm, charged to that record, never to step().
#pragma once

#include <functional>
#include <memory>

#include "recon/linop/linear_operator.hpp"

namespace recon {

// d on the data term's backend, made when a direct value first needs it: a run whose expanded form
// stays trusted, or whose records carry no costs, never copies the samples to the backend.
using DataSource = std::function<std::shared_ptr<const Vector>()>;
DataSource givenData(std::shared_ptr<const Vector> data);  // d that already exists
// `make` called once, its result shared by every copy of the source (solvers built on one system).
DataSource madeOnce(DataSource make);

class DataTerm {
public:
    // The worst relative accuracy of the products the expanded form is made of, and how far above
    // its error bound the expanded form must lie to be kept: within 1 % of the true value.
    static constexpr double kProductAccuracy = 1e-4;
    static constexpr double kMargin = 100;

    // `op` A (its forward used for the direct value), `data_norm2` ||d||^2.
    DataTerm(LinearOperatorPtr op, double data_norm2);

    // Where d comes from (A's output, on A's backend; none: expanded form only, clamped at 0).
    void setData(DataSource source);
    void setData(std::shared_ptr<const Vector> data);  // d that exists: its size checked here
    bool hasData() const { return bool(source_); }
    double dataNorm2() const { return data_norm2_; }

    // ||A x - d||^2 from the expanded form's parts (`form` = x^H A^H A x, `real_xb` = Re x^H A^H d).
    // exact: the expanded form where trusted(), else the direct value (with d); otherwise (and
    // without d) the expanded form clamped at 0, with no operator applied.
    double value(const Vector& x, double form, double real_xb, bool exact) const;
    // ||A x - d||^2 by one application of A (d must be set).
    double direct(const Vector& x) const;
    // The expanded form and whether it lies kMargin times above its error bound
    // kProductAccuracy (|form| + 2 |real_xb| + ||d||^2).
    double expanded(double form, double real_xb) const { return form - 2 * real_xb + data_norm2_; }
    bool trusted(double form, double real_xb) const;

private:
    void checkSize(const Vector& data) const;  // InputError unless A gives data.size() values

    LinearOperatorPtr op_;
    double data_norm2_ = 0;
    DataSource source_;
    mutable std::shared_ptr<const Vector> data_;  // source_'s d, on first need
    mutable Vector scratch_;  // A x - d (one solve at a time, as operators' scratch)
};

}  // namespace recon
