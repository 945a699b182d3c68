// ReconstructionSession::solve for the sparse priors: FISTA or POGM (recon/solvers/fista.hpp) for one
// wavelet term, ADMM (recon/solvers/admm.hpp) otherwise, over the session's cached F (Toeplitz
// normal) and F^H d, with the priors' transforms and FISTA's bound on ||F^H F|| built once per
// data set and the last single-coil solve kept resident, so a lambda change continues warm.
// SENSE (coil_combination sense): the same solvers over E (SenseSystem: its normal sum_c S_c^H T S_c)
// and E^H d, one solve for all coils, s with the maps' energy (senseLambdaScale), ADMM's circulant
// corrected by the maps' energy (SensePreconditioner), FISTA's step from ||E^H E|| (docs/SENSE.md).
// Density-weighted (SolveOptions::weighting): the data term ||D^{1/2} (F x - d)||^2,
// i.e. F^H D F, F^H D d and s_D = Q_D(0) as the quadratic weighted CG forms them (fourierOperator,
// weightedAdjoint, lambdaScale), and so FISTA's ||F^H D F|| and ADMM's circulant of Q_D (docs/SPARSE.md);
// SENSE: the weighted SenseSystem (E_D, E_D^H D^{1/2} d) and s_D in senseLambdaScale (docs/SENSE.md).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "recon/backend/circulant_preconditioner.hpp"
#include "recon/core/errors.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/solvers/admm.hpp"
#include "recon/solvers/fista.hpp"
#include "recon/solvers/pdhg.hpp"

namespace recon {

struct ReconstructionSession::SparseState {
    std::map<std::string, LinearOperatorPtr> transforms;  // by prior and its options
    std::string key;                                      // of the resident solve: method, priors
    std::unique_ptr<Admm> admm;    // the resident solve: one of these three
    std::unique_ptr<Fista> fista;
    std::unique_ptr<Pdhg> pdhg;
    int total_iterations = 0;
    std::map<std::string, double> normal_norm;  // ||F^H F|| (times the margin) by Fourier method
    // W^H W's circulant eigenvalues by transform key (ADMM's preconditioner holds them too).
    std::map<std::string, std::shared_ptr<const Vector>> circulant_penalty;
};

std::string toString(SparseSolver s) {
    switch (s) {
        case SparseSolver::Auto: return "auto";
        case SparseSolver::Admm: return "admm";
        case SparseSolver::Fista: return "fista";
        case SparseSolver::Pogm: return "pogm";
        case SparseSolver::Pdhg: return "pdhg";
    }
    return "?";
}

SparseSolver parseSparseSolver(const std::string& name) {
    for (SparseSolver s : {SparseSolver::Auto, SparseSolver::Admm, SparseSolver::Fista, SparseSolver::Pogm, SparseSolver::Pdhg})
        if (toString(s) == name) return s;
    throw InputError("unknown sparse solver '" + name + "' (expected auto, admm, fista, pogm or pdhg)");
}

namespace {

// The auto solver's momentum for one wavelet term: POGM, ahead of FISTA after the same steps on the
// 2D demo cases and by 1.5-3 dB after 1000 steps on the paper's 128^3 case (docs/SPARSE.md).
constexpr Momentum kAutoMomentum = Momentum::Pogm;
// The power of ADMM's circulant preconditioner: M^{-1/2} (docs/SPARSE.md).
constexpr double kAdmmPreconditionerExponent = 0.5;

std::string methodName(const FourierMethod& m) {
    if (m.name != "nufft") return m.name;
    std::ostringstream s;
    s << m.name << " " << m.tolerance;
    return s.str();
}

std::string transformKey(const SolveOptions::PriorTerm& p, const SolveOptions& o) {
    const RegularizerKind k = p.kind;
    std::ostringstream s;
    s << toString(k);
    if (k == RegularizerKind::Wavelet) s << " " << toString(o.wavelet);
    if (k != RegularizerKind::Wavelet) s << (p.anisotropic ? " anisotropic" : " isotropic");
    if (k == RegularizerKind::AnatomicalTotalVariation) s << " " << o.anatomical.edge_threshold << " " << o.anatomical.edge_weight;
    return s.str();
}

}  // namespace

std::function<LinearOperatorPtr(const std::vector<double>&)> ReconstructionSession::admmPreconditioner(
    const std::vector<SparseTerm>& terms, const std::vector<SolveOptions::PriorTerm>& priors, const SolveOptions& opts,
    const FourierMethod& m, Monitor& monitor, const SenseSystem* sense) {
    SparseState& st = *sparse_;
    std::shared_ptr<const Vector> data = circulantData(m, monitor.progress(Phase::ToeplitzKernel), opts.weighting);
    std::vector<std::shared_ptr<const Vector>> penalty;
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const std::string tk = transformKey(priors[k], opts);
        auto it = st.circulant_penalty.find(tk);
        if (it == st.circulant_penalty.end())
            it = st.circulant_penalty
                     .emplace(tk, std::make_shared<const Vector>(impulseCirculantEigenvalues(*backend_, dataset().grid, *terms[k].transform)))
                     .first;
        penalty.push_back(it->second);
    }
    // SENSE: the maps' energy from the maps the operator holds (on a split operator, from the host's).
    std::shared_ptr<const SensePreconditioner> maps_correction;
    if (sense)
        maps_correction = std::make_shared<const SensePreconditioner>(
            *backend_, sense->one_device ? coilEnergy(*backend_, sense->one_device->maps())
                                         : coilEnergy(*backend_, sense->maps->maps, dataset().grid.voxels()));
    return [backend = backend_, data, penalty, grid = dataset().grid, maps_correction](const std::vector<double>& rho) -> LinearOperatorPtr {
        std::vector<const Vector*> terms;
        for (const auto& p : penalty) terms.push_back(p.get());
        // M^{-1/2}, as the quadratic CG's (docs/SCALING.md: the full inverse boosts the sparsely
        // sampled edge of k-space early); measured for ADMM in docs/SPARSE.md. Formed and applied
        // on the backend (a new rho: one combination and one elementwise pass).
        LinearOperatorPtr circulant = inverseCirculant(*backend, grid, *data, rho, terms, kAdmmPreconditionerExponent);
        if (!maps_correction) return circulant;
        // SENSE: sum_k rho_k W_k^H W_k takes the quadratic penalty's place (its eigenvalues summed, weight 1).
        Vector combined = backend->make(data->size());
        if (!terms.empty()) backend->combine(rho, terms, combined);
        return maps_correction->make(std::move(circulant), *data, terms.empty() ? nullptr : &combined, 1.0, kAdmmPreconditionerExponent);
    };
}

SolveResult ReconstructionSession::solveSparse(const SolveOptions& opts, Monitor& monitor, const ComplexArray* warm) {
    const Dataset& d = dataset();
    std::vector<SolveOptions::PriorTerm> priors = opts.priors;
    if (priors.empty()) priors.push_back({opts.regularizer, opts.lambda});
    for (const auto& p : priors) {
        if (!isSparse(p.kind))
            throw InputError("'" + toString(p.kind) + "' is a quadratic regulariser; sparse priors are tv, wavelet and anatomical-tv");
        if (!(p.lambda >= 0) || !std::isfinite(p.lambda))
            throw InputError("lambda of the " + toString(p.kind) + " prior must be a finite number >= 0");
        if (p.kind == RegularizerKind::AnatomicalTotalVariation && !d.hasReference())
            throw InputError("anatomical TV needs a reference image; this data set has none");
    }
    if (opts.admm_inner_iterations < 1 || opts.admm_inner_iterations > 1000)
        throw InputError("the CG iterations per ADMM step must be in 1..1000");
    const FourierMethod m = resolve(opts.method);
    // SENSE: one solve over all coils, E in F's place (its normal sum_c S_c^H T S_c) and E^H d in F^H d's.
    const bool sense = d.coils > 1 && opts.coil_combination == CoilCombination::Sense;
    const bool weighted = opts.weighting == DataWeighting::Density;
    const std::vector<double>* weights =
        weighted ? &densityWeights(weightingDensityMethod(), monitor.progress(Phase::DensityWeights)) : nullptr;
    const int solves = sense ? 1 : d.coils;
    SolveResult result;
    result.method = (sense ? "sense " : "") + methodName(m);
    const std::string model = result.method + (weighted ? " | density-weighted" : "");  // what F^H F (or F^H D F) is cached under
    result.lambda = priors.front().lambda;
    result.lambda_scale =
        sense ? senseLambdaScale(coilMaps(opts.coil_maps, monitor.progress(Phase::AdjointData)), opts.weighting) : lambdaScale(opts.weighting);
    if (sense) result.coil_combination = "sense";

    LinearOperatorPtr fourier = sense ? nullptr : fourierOperator(m, monitor.progress(Phase::ToeplitzKernel), opts.weighting);
    if (!sparse_) sparse_ = std::make_shared<SparseState>();
    SparseState& st = *sparse_;
    std::vector<SparseTerm> terms;
    // FISTA's and POGM's prox is exact only for one orthogonal transform: one wavelet term.
    const bool one_wavelet = priors.size() == 1 && priors.front().kind == RegularizerKind::Wavelet;
    const bool asked_prox_gradient = opts.sparse_solver == SparseSolver::Fista || opts.sparse_solver == SparseSolver::Pogm;
    if (asked_prox_gradient && !one_wavelet)
        throw InputError(toString(opts.sparse_solver) +
                         " solves one wavelet prior (its prox is exact only for an orthogonal transform); "
                         "use the admm solver for tv, anatomical-tv and sums of priors");
    // PDHG: the uniform data term coil by coil, F itself (a NUFFT pair per step).
    const bool use_pdhg = opts.sparse_solver == SparseSolver::Pdhg;
    if (use_pdhg && (sense || weighted))
        throw InputError("the pdhg solver takes the uniform data term, coil by coil (no density weighting, no SENSE); use admm");
    const bool use_fista = one_wavelet && opts.sparse_solver != SparseSolver::Admm && !use_pdhg;
    // auto: POGM, or FISTA under the averaged shifts (POGM does not converge with them).
    const bool fista_momentum = opts.sparse_solver == SparseSolver::Fista ||
                                (opts.sparse_solver == SparseSolver::Auto && opts.wavelet_shifts == WaveletShifts::Averaged);
    const Momentum momentum = fista_momentum  ? Momentum::Fista
                              : opts.sparse_solver == SparseSolver::Pogm ? Momentum::Pogm
                                                                         : kAutoMomentum;
    result.solver = use_pdhg ? "pdhg" : !use_fista ? "admm" : momentum == Momentum::Pogm ? "pogm" : "fista";
    std::string key = model + (sense ? " | " + senseMapsKey(opts) : "") +
                      (use_pdhg ? " | pdhg " + std::to_string(opts.pdhg_dual_scale) + (opts.pdhg_density_weights ? " density" : " none")
                       : use_fista ? " | " + result.solver + (" shifts " + toString(opts.wavelet_shifts))
                                                 : " | admm " + std::to_string(opts.admm_inner_iterations) + " " +
                                                       std::to_string(opts.admm_threshold_scale) + " " +
                                                       std::to_string(opts.admm_relaxation) +
                                                       (!opts.admm_balance_rho ? " fixed " : opts.admm_spectral_rho ? " spectral " : " balanced ") +
                                                       toString(opts.admm_preconditioner));
    for (const auto& p : priors) {
        const double weight = p.lambda * result.lambda_scale;
        if (!std::isfinite(weight)) throw InputError("lambda * s overflows for the " + toString(p.kind) + " prior");
        const std::string tk = transformKey(p, opts);
        key += " | " + tk;
        auto it = st.transforms.find(tk);
        if (it == st.transforms.end()) {
            SparseTerm built;
            if (p.kind == RegularizerKind::Wavelet) built = waveletSparsity(*backend_, d.grid, weight, opts.wavelet);
            else
                built = totalVariation(*backend_, d.grid, weight, p.anisotropic,
                                       p.kind == RegularizerKind::AnatomicalTotalVariation ? &d.reference : nullptr, opts.anatomical);
            it = st.transforms.emplace(tk, built.transform).first;
        }
        SparseTerm t;
        t.name = toString(p.kind);
        t.weight = weight;
        t.transform = it->second;
        t.group = (p.kind == RegularizerKind::Wavelet || p.anisotropic) ? 1 : std::size_t(d.grid.dims);
        terms.push_back(std::move(t));
    }

    const bool continue_resident = opts.warm_start && solves == 1 && (st.admm || st.fista || st.pdhg) && st.key == key;
    std::optional<SenseSystem> system;
    if (sense && !continue_resident) {
        system = senseSystem(opts, monitor);
        fourier = system->encoding;
    }
    double normal_norm = 0;
    if (use_fista) {
        // FISTA's step: ||E^H E|| for SENSE (the maps' energy scales it), ||F^H F|| otherwise.
        const std::string nk = model + (sense ? " | " + senseMapsKey(opts) : "");
        auto it = st.normal_norm.find(nk);
        if (it == st.normal_norm.end() && fourier)
            it = st.normal_norm.emplace(nk, estimateNormalNorm(*fourier, 30, 1.05, monitor.progress(Phase::ToeplitzKernel))).first;
        if (it != st.normal_norm.end()) normal_norm = it->second;
    }
    RunOptions run = runOptions(opts);
    std::vector<ComplexArray> coil_images;
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < solves; ++c) {
        std::unique_ptr<Admm> owned_admm;
        std::unique_ptr<Fista> owned_fista;
        std::unique_ptr<Pdhg> owned_pdhg;
        IterativeAlgorithm* alg = nullptr;
        if (c == 0 && continue_resident) {
            if (st.fista) {
                st.fista->setWeight(terms.front().weight);
                alg = st.fista.get();
            } else if (st.pdhg) {
                for (std::size_t k = 0; k < terms.size(); ++k) st.pdhg->setWeight(k, terms[k].weight);
                alg = st.pdhg.get();
            } else {
                for (std::size_t k = 0; k < terms.size(); ++k) st.admm->setWeight(k, terms[k].weight);
                alg = st.admm.get();
            }
            result.warm_started = true;
        } else if (use_pdhg) {
            PdhgOptions po;
            // The duals (v_k in the ball of radius lambda s, u ~ F x - d) dwarf the image by about s:
            // the dual steps in units of s (docs/SPARSE.md: 1 without s was still 10 dB short after 300 steps).
            po.dual_scale = opts.pdhg_dual_scale * result.lambda_scale;
            if (opts.pdhg_density_weights)
                po.k_space_weights = densityWeights(weightingDensityMethod(), monitor.progress(Phase::DensityWeights));
            owned_pdhg = std::make_unique<Pdhg>(fourier, *dataOnBackend(c, nullptr), terms, std::move(po),
                                                monitor.progress(Phase::ToeplitzKernel));
            if (solves == 1 && d.hasTruth()) owned_pdhg->setTruth(d.truth);
            if (solves == 1 && warm && warm->size() == d.grid.voxels()) owned_pdhg->setInitial(*warm);
            alg = owned_pdhg.get();
        } else {
            // F^H d, or F^H D d and ||D^{1/2} d||^2 with the weights.
            std::shared_ptr<const Vector> fhd =
                sense ? nullptr : weightedAdjoint(weighted ? weighted_fhd_ : fhd_, c, m, weights, monitor.progress(Phase::AdjointData));
            const Vector& rhs = sense ? system->rhs : *fhd;
            double dn = sense ? system->data_norm2 : 0.0;
            if (!sense)
                for (std::size_t i = 0; i < d.samples(); ++i) dn += std::norm(d.coil(c)[i]) * (weights ? (*weights)[i] : 1.0);
            const DataSource data = sense ? system->data : dataSource(c, weights);
            // SENSE's image carries the maps' reference phase: no live PSNR against the magnitude truth (as solveSense).
            const bool truth = d.coils == 1 && d.hasTruth();
            const bool start = solves == 1 && warm && warm->size() == d.grid.voxels();
            if (use_fista) {
                FistaOptions fo;
                fo.lipschitz = normal_norm;
                fo.momentum = momentum;
                fo.shifts = opts.wavelet_shifts;
                if (fo.shifts == WaveletShifts::Averaged) fo.averaged_offsets = averagedShiftOffsets(d.grid);
                owned_fista = std::make_unique<Fista>(fourier, rhs, dn, terms.front(), fo);
                owned_fista->setData(data);
                if (truth) owned_fista->setTruth(d.truth);
                if (start) owned_fista->setInitial(*warm);
                alg = owned_fista.get();
            } else {
                // The image's magnitude scale for ADMM's rho rule: F^H d / s is the image blurred by
                // the sampling's point-spread function (F^H F has s on its diagonal; F^H D F s_D).
                const ComplexArray fhd_host = backend_->toHost(rhs);
                double peak = 0;
                for (const cdouble& v : fhd_host) peak = std::max(peak, std::abs(v));
                AdmmOptions ao;
                ao.inner_iterations = opts.admm_inner_iterations;
                ao.threshold_scale = opts.admm_threshold_scale;
                ao.image_scale = peak > 0 && result.lambda_scale > 0 ? peak / result.lambda_scale : 1.0;
                ao.relaxation = opts.admm_relaxation;
                ao.adaptive_rho = opts.admm_balance_rho;
                ao.spectral_rho = opts.admm_spectral_rho;
                if (resolvePreconditioner(opts.admm_preconditioner, backend_->info(), priors.front().kind, sense) == PreconditionerKind::Circulant)
                    ao.preconditioner = admmPreconditioner(terms, priors, opts, m, monitor, sense ? &*system : nullptr);
                owned_admm = std::make_unique<Admm>(fourier, rhs, dn, terms, ao);
                owned_admm->setData(data);
                if (truth) owned_admm->setTruth(d.truth);
                if (start) {
                    owned_admm->setInitial(*warm);
                } else if (opts.start == StartImage::Gridding && !sense) {
                    densityWeights(monitor.progress(Phase::DensityWeights));
                    owned_admm->setInitialScaled(*densityWeightedAdjoint(c, m, monitor.progress(Phase::AdjointData)));
                }
                alg = owned_admm.get();
            }
        }
        RunResult r = runIterations(*alg, run, monitor, c);
        result.history = std::move(r.history);
        coil_images.push_back(std::move(r.image));
        if (solves == 1) {
            const int before = continue_resident ? st.total_iterations : 0;
            if (owned_admm || owned_fista || owned_pdhg) {
                st.admm = std::move(owned_admm);
                st.fista = std::move(owned_fista);
                st.pdhg = std::move(owned_pdhg);
                st.key = key;
            }
            st.total_iterations = before + int(result.history.size());
            result.total_iterations = st.total_iterations;
        } else {
            result.total_iterations = int(result.history.size());
        }
        if (r.cancelled()) {
            result.cancelled = true;
            break;
        }
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sense) {
        if (!coil_images.empty()) setSenseImage(result, std::move(coil_images[0]));
        std::lock_guard<std::mutex> lock(mutex_);
        result.coil_maps = coil_maps_;  // what the solve was built with (its key names them)
    } else if (coil_images.size() == 1) {
        result.image = std::move(coil_images[0]);
    } else if (!coil_images.empty()) {
        result.image = sumOfSquares(coil_images);
    }
    return result;
}

}  // namespace recon
