#include "recon/solvers/data_term.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "recon/core/errors.hpp"

namespace recon {

DataTerm::DataTerm(LinearOperatorPtr op, double data_norm2) : op_(std::move(op)), data_norm2_(data_norm2) {
    if (!op_) throw InputError("data term: no operator");
    if (!std::isfinite(data_norm2) || data_norm2 < 0) throw InputError("data term: ||d||^2 is not a finite number >= 0");
}

DataSource givenData(std::shared_ptr<const Vector> data) {
    return [data = std::move(data)] { return data; };
}

DataSource madeOnce(DataSource make) {
    auto made = std::make_shared<std::shared_ptr<const Vector>>();
    return [made, make = std::move(make)] {
        if (!*made) *made = make();
        return *made;
    };
}

void DataTerm::setData(DataSource source) {
    source_ = std::move(source);
    data_.reset();
}

void DataTerm::setData(std::shared_ptr<const Vector> data) {
    if (data) checkSize(*data);
    setData(data ? givenData(std::move(data)) : DataSource{});
}

void DataTerm::checkSize(const Vector& data) const {
    if (data.size() != op_->outSize())
        throw InputError("data term: d has " + std::to_string(data.size()) + " values, " + op_->name() + " gives " +
                         std::to_string(op_->outSize()));
}

bool DataTerm::trusted(double form, double real_xb) const {
    const double bound = kProductAccuracy * (std::abs(form) + 2 * std::abs(real_xb) + data_norm2_);
    return expanded(form, real_xb) >= kMargin * bound;
}

double DataTerm::value(const Vector& x, double form, double real_xb, bool exact) const {
    if (!exact || !source_ || trusted(form, real_xb)) return std::max(0.0, expanded(form, real_xb));
    return direct(x);
}

double DataTerm::direct(const Vector& x) const {
    if (!source_) throw InputError("data term: the direct value needs d");
    if (!data_) {
        std::shared_ptr<const Vector> made = source_();
        if (!made) throw InputError("data term: its source gave no d");
        checkSize(*made);
        data_ = std::move(made);
    }
    VectorSpace& s = op_->space();
    if (scratch_.size() != op_->outSize()) scratch_ = s.make(op_->outSize());
    op_->forward(x, scratch_);
    s.axpy(-1.0, *data_, scratch_);
    return s.norm2(scratch_);
}

}  // namespace recon
