#include "recon/linop/distributed_stack.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "recon/core/errors.hpp"

namespace recon {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One thread per part, alive as long as the operator: a per-thread resource of a
// backend (a GPU backend's pinned staging buffer) is made once, not every iteration.
class Workers {
public:
    explicit Workers(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
    }
    ~Workers() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        start_.notify_all();
        for (auto& t : threads_) t.join();
    }
    // Runs job(i) on thread i for every i and returns when all have finished. `job` must not throw.
    void run(const std::function<void(std::size_t)>& job) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &job;
            pending_ = threads_.size();
            ++generation_;
        }
        start_.notify_all();
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return pending_ == 0; });
        job_ = nullptr;
    }

private:
    void loop(std::size_t i) {
        std::uint64_t seen = 0;
        for (;;) {
            const std::function<void(std::size_t)>* job = nullptr;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                start_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
                job = job_;
            }
            (*job)(i);
            std::lock_guard<std::mutex> lock(mutex_);
            if (--pending_ == 0) done_.notify_one();
        }
    }
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    const std::function<void(std::size_t)>* job_ = nullptr;
    std::size_t pending_ = 0;
    std::uint64_t generation_ = 0;
    bool stop_ = false;
};

std::size_t commonInSize(const std::vector<StackPart>& parts) {
    if (parts.empty()) throw InputError("distributed stack: no parts");
    for (const StackPart& p : parts)
        if (!p.op) throw InputError("distributed stack: part '" + p.where + "' has no operator");
    for (const StackPart& p : parts)
        if (p.op->inSize() != parts.front().op->inSize())
            throw InputError("distributed stack: " + p.op->name() + " on " + p.where + " takes " + std::to_string(p.op->inSize()) +
                             " values, " + parts.front().op->name() + " on " + parts.front().where + " takes " +
                             std::to_string(parts.front().op->inSize()));
    return parts.front().op->inSize();
}

// Each of these checks the parts first: the base class's arguments are evaluated in any order.
std::size_t totalOutSize(const std::vector<StackPart>& parts) {
    commonInSize(parts);
    std::size_t n = 0;
    for (const StackPart& p : parts) n += p.op->outSize();
    return n;
}

std::string stackName(const std::vector<StackPart>& parts) {
    commonInSize(parts);
    return parts.front().op->name() + " split over " + std::to_string(parts.size()) + " devices";
}

}  // namespace

void copyAcross(VectorSpace& self, VectorSpace& from_space, const Vector& from, VectorSpace& to_space, Vector& to) {
    if (from.size() != to.size())
        throw InputError("copy across backends: " + std::to_string(from.size()) + " values into a vector of " +
                         std::to_string(to.size()));
    if (&from_space == &to_space) {
        to_space.copy(from, to);
        to_space.synchronize();
        return;
    }
    const bool direct = &self == &to_space ? self.pullFrom(from_space, from, to) : self.pushTo(from, to_space, to);
    if (direct) {
        self.synchronize();
        return;
    }
    to_space.upload(from_space.toHost(from), to);  // through host memory
    to_space.synchronize();
}

struct DistributedStack::Impl {
    struct Part {
        std::shared_ptr<const void> owner;  // first: released after the part's vectors and operator
        StackPart p;
        VectorSpace* space = nullptr;
        bool at_home = false;
        std::size_t offset = 0;  // its rows in the stacked output
        // On the part's space: x's copy (not at home), its result on the image side, its rows.
        Vector x, result, rows;
        // On home (not at home): the result and the rows copied there.
        Vector result_home, rows_home;
        const Vector& resultOnHome() const { return at_home ? result : result_home; }
        Vector& rowsOnHome() { return at_home ? rows : rows_home; }
        double copy_seconds = 0;  // this application's
        std::exception_ptr error;
    };
    VectorSpace& home;
    std::vector<Part> parts;
    std::unique_ptr<Workers> workers;
    long applications = 0;
    std::size_t fail_part = 0;
    long fail_application = 0;
    DistributedStats stats;

    Impl(VectorSpace& h, std::vector<StackPart> ps) : home(h) {
        std::size_t offset = 0;
        for (StackPart& sp : ps) {
            Part p;
            p.owner = sp.owner;
            p.space = &sp.op->space();
            p.at_home = p.space == &home;
            p.offset = offset;
            offset += sp.op->outSize();
            p.p = std::move(sp);
            parts.push_back(std::move(p));
        }
        workers = std::make_unique<Workers>(parts.size());
    }

    // Vectors are made on the caller's thread, before the parts run. `rows_home`: the parts' rows
    // also on home (not for data that comes from the host).
    void prepare(bool image_side, bool rows, bool rows_home = true) {
        for (Part& p : parts) {
            const std::size_t n = p.p.op->inSize(), m = p.p.op->outSize();
            if (image_side && p.result.size() != n) p.result = p.space->make(n);
            if (image_side && !p.at_home && p.result_home.size() != n) p.result_home = home.make(n);
            if (!p.at_home && p.x.size() != n) p.x = p.space->make(n);
            if (rows && p.rows.size() != m) p.rows = p.space->make(m);
            if (rows && rows_home && !p.at_home && p.rows_home.size() != m) p.rows_home = home.make(m);
        }
    }

    // Runs work(part) on every part at once, each on its own thread; then rethrows the first
    // failure, naming its part, once every part has finished.
    void run(const std::string& op_name, const std::function<void(Part&)>& work) {
        const long application = ++applications;
        const auto t0 = Clock::now();
        home.synchronize();  // the parts read home's vectors from their own queues
        workers->run([&](std::size_t i) {
            Part& p = parts[i];
            p.error = nullptr;
            p.copy_seconds = 0;
            try {
                if (fail_application == application && fail_part == i)
                    throw Error("injected failure (DistributedStack::failForTesting)");
                work(p);
            } catch (...) {
                p.error = std::current_exception();
            }
        });
        std::size_t failed = 0;
        const Part* first = nullptr;
        for (const Part& p : parts)
            if (p.error) {
                ++failed;
                if (!first) first = &p;
            }
        if (first) {
            std::string what = "unknown error";
            try {
                std::rethrow_exception(first->error);
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {
            }
            throw Error(first->p.where + " failed in " + op_name + " (application " + std::to_string(application) + "): " + what +
                        (failed > 1 ? " (and " + std::to_string(failed - 1) + " other device(s) failed too)" : ""));
        }
        double slowest_copies = 0;
        for (const Part& p : parts) slowest_copies = std::max(slowest_copies, p.copy_seconds);
        stats.applications += 1;
        stats.communication_seconds += slowest_copies;
        stats.seconds += since(t0);
    }

    // x (on home) on the part's space; the copy's time charged to the part.
    const Vector& input(Part& p, const Vector& x) {
        if (p.at_home) return x;
        const auto t0 = Clock::now();
        copyAcross(*p.space, home, x, *p.space, p.x);
        p.copy_seconds += since(t0);
        return p.x;
    }
    void sendHome(Part& p, const Vector& mine, Vector& theirs) {
        p.space->synchronize();  // its work done: what follows is the copy alone
        if (p.at_home) return;
        const auto t0 = Clock::now();
        copyAcross(*p.space, *p.space, mine, home, theirs);
        p.copy_seconds += since(t0);
    }
    // y = sum of the parts' results, on home; its time counts as communication.
    void sumOnHome(Vector& y) {
        const auto t0 = Clock::now();
        std::vector<double> ones(parts.size(), 1.0);
        std::vector<const Vector*> results;
        for (const Part& p : parts) results.push_back(&p.resultOnHome());
        home.combine(ones, results, y);
        home.synchronize();
        const double s = since(t0);
        stats.communication_seconds += s;
        stats.seconds += s;
    }
};

DistributedStack::DistributedStack(VectorSpace& home, std::vector<StackPart> parts)
    : LinearOperator(home, commonInSize(parts), totalOutSize(parts), stackName(parts)),
      impl_(std::make_unique<Impl>(home, std::move(parts))) {}

DistributedStack::~DistributedStack() = default;

std::size_t DistributedStack::parts() const { return impl_->parts.size(); }
const std::string& DistributedStack::where(std::size_t part) const { return impl_->parts.at(part).p.where; }
DistributedStats DistributedStack::stats() const { return impl_->stats; }
void DistributedStack::resetStats() { impl_->stats = {}; }
void DistributedStack::failForTesting(std::size_t part, long application) {
    impl_->fail_part = part;
    impl_->fail_application = application > 0 ? impl_->applications + application : 0;
}

void DistributedStack::applyNormal(const Vector& x, Vector& y) const {
    impl_->prepare(true, false);
    impl_->run(name() + " (normal)", [&](Impl::Part& p) {
        p.p.op->normal(impl_->input(p, x), p.result);
        impl_->sendHome(p, p.result, p.result_home);
    });
    impl_->sumOnHome(y);
}

void DistributedStack::applyForward(const Vector& x, Vector& y) const {
    impl_->prepare(false, true);
    impl_->run(name() + " (forward)", [&](Impl::Part& p) {
        p.p.op->forward(impl_->input(p, x), p.rows);
        impl_->sendHome(p, p.rows, p.rows_home);
    });
    for (Impl::Part& p : impl_->parts) space().copyRange(p.rowsOnHome(), 0, y, p.offset, p.p.op->outSize());
}

void DistributedStack::applyAdjoint(const Vector& y, Vector& x) const {
    impl_->prepare(true, true);
    for (Impl::Part& p : impl_->parts) space().copyRange(y, p.offset, p.rowsOnHome(), 0, p.p.op->outSize());
    impl_->run(name() + " (adjoint)", [&](Impl::Part& p) {
        if (!p.at_home) {
            const auto t0 = Clock::now();
            copyAcross(*p.space, impl_->home, p.rows_home, *p.space, p.rows);
            p.copy_seconds += since(t0);
        }
        p.p.op->adjoint(p.rows, p.result);
        impl_->sendHome(p, p.result, p.result_home);
    });
    impl_->sumOnHome(x);
}

void DistributedStack::adjointFromHost(std::span<const cdouble> y, Vector& x) const {
    if (y.size() != outSize())
        throw InputError(name() + ": " + std::to_string(y.size()) + " values of data, not " + std::to_string(outSize()));
    if (x.size() != inSize())
        throw InputError(name() + ": an image of " + std::to_string(x.size()) + " values, not " + std::to_string(inSize()));
    impl_->prepare(true, true, false);
    impl_->run(name() + " (adjoint of host data)", [&](Impl::Part& p) {
        const auto first = y.begin() + std::ptrdiff_t(p.offset);
        const ComplexArray mine(first, first + std::ptrdiff_t(p.p.op->outSize()));
        p.space->upload(mine, p.rows);
        p.p.op->adjoint(p.rows, p.result);
        impl_->sendHome(p, p.result, p.result_home);
        p.rows = Vector();  // the data are needed once
    });
    impl_->sumOnHome(x);
}

LinearOperatorPtr distributedStack(VectorSpace& home, std::vector<StackPart> parts) {
    if (parts.size() == 1 && parts.front().op && &parts.front().op->space() == &home) return parts.front().op;
    return std::make_shared<DistributedStack>(home, std::move(parts));
}

}  // namespace recon
