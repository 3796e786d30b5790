#include "analysis/perfmodel.h"

#include <QPair>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kCurveTolerance = 1.01;  // sizes this close to an end of a measured curve read it there

// Least squares of t ≈ a·L(n) + c·B(n)·S (the algorithm's steps), each row weighted by 1/t
// (relative errors, so a 1 KiB message counts as much as a 1 GiB one). False when the points do
// not determine both coefficients.
bool fitTwo(const QList<CommSample>& s, AllreduceAlgorithm algorithm, double* a, double* c, double* rms)
{
    double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
    for (const CommSample& p : s) {
        const double w = 1.0 / p.seconds;
        const auto [steps, factor] = allreduceSteps(algorithm, p.ranks);
        const double x1 = steps * w, x2 = factor * p.bytes * w, y = 1.0;
        s11 += x1 * x1;
        s12 += x1 * x2;
        s22 += x2 * x2;
        r1 += x1 * y;
        r2 += x2 * y;
    }
    const double det = s11 * s22 - s12 * s12;
    if (!(std::abs(det) > 1e-12 * std::max(1e-300, s11 * s22))) return false;
    *a = (r1 * s22 - r2 * s12) / det;
    *c = (s11 * r2 - s12 * r1) / det;
    double sq = 0;
    for (const CommSample& p : s) {
        const auto [steps, factor] = allreduceSteps(algorithm, p.ranks);
        const double pred = *a * steps + *c * factor * p.bytes;
        sq += std::pow((pred - p.seconds) / p.seconds, 2);
    }
    *rms = std::sqrt(sq / s.size());
    return true;
}

constexpr AllreduceAlgorithm kAlgorithms[] = {AllreduceAlgorithm::Ring, AllreduceAlgorithm::Tree, AllreduceAlgorithm::RecursiveDoubling};
// Another algorithm replaces the ring only where it fits the timings clearly better: its relative
// RMS below this share of the ring's, and lower by at least kAlgorithmMargin (a line that misses
// Open MPI's steps by 45 % does not choose an algorithm by 3 points).
constexpr double kAlgorithmShare = 0.8;
constexpr double kAlgorithmMargin = 0.01;

// Each algorithm's α–β fit to the timings of one link class, in kAlgorithms' order; `bandwidthAlone`
// says, per fit, that latency could not be fitted (one (n, S), or no positive bandwidth). Empty
// when every timing has 0 bytes.
QList<AlgorithmFit> fitAlgorithms(const QList<CommSample>& part, QList<bool>& bandwidthAlone)
{
    QSet<QPair<int, double>> points;
    double bytes = 0;
    for (const CommSample& s : part) {
        points.insert(qMakePair(s.ranks, s.bytes));
        bytes += s.bytes;
    }
    if (!(bytes > 0)) return {};
    QList<AlgorithmFit> fits;
    for (AllreduceAlgorithm algorithm : kAlgorithms) {
        AlgorithmFit f;
        f.algorithm = algorithm;
        double a = 0, c = 0;
        const bool line = points.size() > 1 && fitTwo(part, algorithm, &a, &c, &f.relativeRms) && c > 0;
        if (line) {
            f.alphaS = std::max(0.0, a);
            f.betaBytesPerS = 1.0 / c;
        } else {
            // One (n, S), or timings no positive bandwidth fits (noise larger than the spread of
            // sizes): the bandwidth alone, latency 0; the residual is the timings' spread.
            double sum = 0, sq = 0;
            for (const CommSample& s : part) {
                const double b = allreduceSteps(algorithm, s.ranks).second * s.bytes / s.seconds;
                sum += b;
                sq += b * b;
            }
            const double mean = sum / part.size();
            f.betaBytesPerS = mean;
            f.relativeRms = std::sqrt(std::max(0.0, sq / part.size() - mean * mean)) / mean;
        }
        bandwidthAlone << !line;
        fits << f;
    }
    return fits;
}

// The ring unless the timings span two rank counts and another fits them clearly better: its
// index in `fits`.
int chosenFit(const QList<AlgorithmFit>& fits, int rankCounts)
{
    int best = 0;
    if (rankCounts >= 2)
        for (int i = 1; i < fits.size(); ++i)
            if (fits[i].relativeRms < std::min(kAlgorithmShare * fits[best].relativeRms, fits[best].relativeRms - kAlgorithmMargin))
                best = i;
    return best;
}

// One link class's timings (or one ranks-per-node's across nodes): their rank counts, and every
// algorithm's fit with the chosen one first. `fits` empty: every timing has 0 bytes.
struct LinkClassFit {
    QList<AlgorithmFit> fits;
    QList<int> ranks;
    bool bandwidthOnly = false;  ///< the chosen fit's latency could not be fitted
};
LinkClassFit fitLinkClass(const QList<CommSample>& part)
{
    LinkClassFit c;
    for (const CommSample& s : part)
        if (!c.ranks.contains(s.ranks)) c.ranks << s.ranks;
    std::sort(c.ranks.begin(), c.ranks.end());
    QList<bool> bandwidthAlone;
    c.fits = fitAlgorithms(part, bandwidthAlone);
    if (c.fits.isEmpty()) return c;
    const int best = chosenFit(c.fits, int(c.ranks.size()));
    c.fits.move(best, 0);
    c.bandwidthOnly = bandwidthAlone[best];
    return c;
}

// Whether a point on `nodes` reads the across-node fits: more than one node and those timed, or
// nothing timed within a node.
bool readsAcross(const AllreduceModel& m, int nodes) { return (nodes > 1 && m.acrossNodesMeasured()) || m.within.isEmpty(); }

const AlgorithmFit* fitOf(const QList<AlgorithmFit>& fits, AllreduceAlgorithm a)
{
    for (const AlgorithmFit& f : fits)
        if (f.algorithm == a) return &f;
    return nullptr;
}
}  // namespace

AllreduceModel::AllreduceModel() : alphaS(kNaN), betaBytesPerS(kNaN), alphaInterS(kNaN), betaInterBytesPerS(kNaN), relativeRms(kNaN) {}

bool AllreduceModel::acrossNodesMeasured() const { return std::isfinite(alphaInterS) && std::isfinite(betaInterBytesPerS); }

double AllreduceModel::time(int ranks, int nodes, double bytes) const
{
    if (ranks <= 1) return 0.0;
    const auto [below, above] = curveAround(ranks, nodes, bytes);
    if (below && above)
        return above->bytes > below->bytes
            ? below->seconds + (above->seconds - below->seconds) * (bytes - below->bytes) / (above->bytes - below->bytes)
            : below->seconds;
    return lineTime(ranks, nodes, bytes);
}

std::pair<const CommSample*, const CommSample*> AllreduceModel::curveAround(int ranks, int nodes, double bytes) const
{
    // `measured` is sorted by ranks, nodes, bytes. A size within 1 % of a timed one is read there
    // (a benchmark rounds sizes to whole elements per rank; the trainer pads its flat vector to the
    // world size): a message a few bytes past its own timing is not between that and the next size.
    const CommSample* below = nullptr;
    const CommSample* above = nullptr;
    const CommSample* nearest = nullptr;
    for (const CommSample& m : measured) {
        if (m.ranks != ranks || m.nodes != nodes) continue;
        if (std::abs(m.bytes - bytes) <= (kCurveTolerance - 1) * bytes &&
            (!nearest || std::abs(m.bytes - bytes) < std::abs(nearest->bytes - bytes)))
            nearest = &m;
        if (m.bytes <= bytes) below = &m;
        if (m.bytes >= bytes && !above) above = &m;
    }
    if (nearest) return {nearest, nearest};
    if (!below || !above) return {nullptr, nullptr};
    return {below, above};
}

bool AllreduceModel::fromMeasuredCurve(int ranks, int nodes, double bytes) const
{
    return ranks > 1 && curveAround(ranks, nodes, bytes).first != nullptr;
}

double AllreduceModel::lineTime(int ranks, int nodes, double bytes) const
{
    if (ranks <= 1) return 0.0;
    const bool inter = nodes > 1 && acrossNodesMeasured();
    if (inter)
        if (const PerNodeFit* g = acrossFit(std::max(1, ranks / nodes))) return g->fits.first().time(ranks, bytes);
    const double alpha = inter ? alphaInterS : alphaS, beta = inter ? betaInterBytesPerS : betaBytesPerS;
    const auto [steps, factor] = allreduceSteps(inter ? algorithmInter() : algorithm(), ranks);
    return steps * alpha + factor * bytes / beta;
}

const AllreduceModel::PerNodeFit* AllreduceModel::acrossFit(int ranksPerNode) const
{
    const PerNodeFit* nearest = nullptr;  // sorted by ranks per node: a tie goes to the larger
    for (const PerNodeFit& g : acrossPerNode)
        if (!nearest || std::abs(g.ranksPerNode - ranksPerNode) <= std::abs(nearest->ranksPerNode - ranksPerNode)) nearest = &g;
    return nearest;
}

QString algorithmName(AllreduceAlgorithm a)
{
    switch (a) {
    case AllreduceAlgorithm::Ring: return QStringLiteral("ring");
    case AllreduceAlgorithm::Tree: return QStringLiteral("tree");
    case AllreduceAlgorithm::RecursiveDoubling: return QStringLiteral("recursive doubling");
    }
    return QString();
}

std::pair<double, double> allreduceSteps(AllreduceAlgorithm a, int ranks)
{
    if (ranks <= 1) return {0.0, 0.0};
    const double n = ranks, rounds = std::ceil(std::log2(n) - 1e-12);
    switch (a) {
    case AllreduceAlgorithm::Ring: return {2 * (n - 1), 2 * (n - 1) / n};
    case AllreduceAlgorithm::Tree: return {2 * rounds, 2 * (n - 1) / n};
    case AllreduceAlgorithm::RecursiveDoubling: return {rounds, rounds};
    }
    return {0.0, 0.0};
}

double AlgorithmFit::time(int ranks, double bytes) const
{
    const auto [steps, factor] = allreduceSteps(algorithm, ranks);
    return steps * alphaS + (factor > 0 ? factor * bytes / betaBytesPerS : 0.0);
}

AllreduceAlgorithm AllreduceModel::algorithm() const
{
    if (!within.isEmpty()) return within.first().algorithm;
    return across.isEmpty() ? AllreduceAlgorithm::Ring : across.first().algorithm;  // only across nodes timed: that fit
}
AllreduceAlgorithm AllreduceModel::algorithmInter() const { return across.isEmpty() ? algorithm() : across.first().algorithm; }
const QList<int>& AllreduceModel::timedRanks(int ranks, int nodes) const
{
    const bool inter = readsAcross(*this, nodes);
    if (inter)
        if (const PerNodeFit* g = acrossFit(std::max(1, ranks / std::max(1, nodes)))) return g->ranks;
    return inter ? acrossRanks : withinRanks;
}
bool AllreduceModel::algorithmKnown(int ranks, int nodes) const { return timedRanks(ranks, nodes).size() >= 2; }

AllreduceModel AllreduceModel::withAlgorithm(AllreduceAlgorithm a, int nodes) const
{
    AllreduceModel m = *this;
    const bool inter = readsAcross(*this, nodes);
    QList<AlgorithmFit>& fits = inter ? m.across : m.within;
    const AlgorithmFit* f = fitOf(fits, a);
    if (!f) return m;
    const AlgorithmFit chosen = *f;
    const auto first = [a](QList<AlgorithmFit>& list) {
        for (int i = 0; i < list.size(); ++i)
            if (list[i].algorithm == a) list.move(i, 0);
    };
    first(fits);
    if (inter)
        for (PerNodeFit& g : m.acrossPerNode) first(g.fits);
    (inter ? m.alphaInterS : m.alphaS) = chosen.alphaS;
    (inter ? m.betaInterBytesPerS : m.betaBytesPerS) = chosen.betaBytesPerS;
    if (inter && within.isEmpty()) {  // only across nodes timed: the within-node line is the same fit
        m.alphaS = chosen.alphaS;
        m.betaBytesPerS = chosen.betaBytesPerS;
    }
    return m;
}

std::pair<double, double> AllreduceModel::algorithmSpan(int ranks, int nodes, double bytes) const
{
    const double t = time(ranks, nodes, bytes);
    if (ranks <= 1 || algorithmKnown(ranks, nodes) || fromMeasuredCurve(ranks, nodes, bytes)) return {t, t};
    double lo = t, hi = t;
    for (AllreduceAlgorithm a : {AllreduceAlgorithm::Ring, AllreduceAlgorithm::Tree}) {
        const double other = withAlgorithm(a, nodes).lineTime(ranks, nodes, bytes);
        lo = std::min(lo, other);
        hi = std::max(hi, other);
    }
    return {lo, hi};
}

double AllreduceModel::bucketedTime(int ranks, int nodes, double bytes, double bucketBytes) const
{
    if (ranks <= 1 || bytes <= 0) return 0.0;
    const double buckets = bucketBytes > 0 ? std::ceil(bytes / bucketBytes) : 1.0;
    // ⌈S/B⌉ messages of S/⌈S/B⌉ bytes (on the α–β line: as many latencies, and S/β of bandwidth).
    return buckets * time(ranks, nodes, bytes / buckets);
}

Expected<AllreduceModel> fitAllreduce(const QList<CommSample>& timings)
{
    QList<CommSample> samples;  // the collectives alone: compute is none, and an overlapped call is not alone
    for (const CommSample& s : timings)
        if (s.op != CommSample::Op::Compute && !s.overlapped) samples << s;
    QList<CommSample> intra, inter;
    for (const CommSample& s : samples) {
        if (s.ranks < 2 || !(s.seconds > 0) || !(s.bytes >= 0))
            return Error{ErrorCode::Usage,
                         QStringLiteral("an allreduce sample needs 2 or more ranks and a positive time (got %1 ranks, %2 s)")
                             .arg(s.ranks)
                             .arg(s.seconds),
                         QString()};
        (s.nodes > 1 ? inter : intra) << s;
    }
    AllreduceModel m;
    // One link class: every algorithm's fit, the chosen first; its rank counts.
    auto fit = [&](const QList<CommSample>& part, const char* what, QList<AlgorithmFit>* fits, QList<int>* rankCounts) -> Status {
        const LinkClassFit c = fitLinkClass(part);
        if (c.fits.isEmpty())
            return Error{ErrorCode::Usage,
                         QStringLiteral("the allreduce %1: every sample has 0 bytes; %2 given").arg(QLatin1String(what)).arg(part.size()),
                         QString()};
        *fits = c.fits;
        *rankCounts = c.ranks;
        m.relativeRms = std::isnan(m.relativeRms) ? fits->first().relativeRms : std::max(m.relativeRms, fits->first().relativeRms);
        m.bandwidthOnly = m.bandwidthOnly || c.bandwidthOnly;
        return Done{};
    };
    if (intra.isEmpty() && inter.isEmpty()) return Error{ErrorCode::Usage, QStringLiteral("no allreduce samples"), QString()};
    if (!intra.isEmpty()) {
        if (auto ok = fit(intra, "within a node", &m.within, &m.withinRanks); !ok) return ok.error();
        m.alphaS = m.within.first().alphaS;
        m.betaBytesPerS = m.within.first().betaBytesPerS;
    }
    if (!inter.isEmpty()) {
        if (auto ok = fit(inter, "across nodes", &m.across, &m.acrossRanks); !ok) return ok.error();
        m.alphaInterS = m.across.first().alphaS;
        m.betaInterBytesPerS = m.across.first().betaBytesPerS;
        // Two or more ranks per node timed: each its own fit (the pooled one mixes links shared by
        // different numbers of ranks).
        std::map<int, QList<CommSample>> perNode;
        for (const CommSample& s : inter) perNode[std::max(1, s.ranks / s.nodes)] << s;
        if (perNode.size() > 1)
            for (const auto& [rpn, part] : perNode)
                if (const LinkClassFit c = fitLinkClass(part); !c.fits.isEmpty())
                    m.acrossPerNode << AllreduceModel::PerNodeFit{rpn, c.fits, c.ranks};
        if (intra.isEmpty()) {  // only across nodes measured: that is the only link there is to use
            m.alphaS = m.alphaInterS;
            m.betaBytesPerS = m.betaInterBytesPerS;
        }
    }
    m.samples = int(samples.size());
    // The measured curve: the mean time at each (ranks, nodes, bytes).
    std::map<std::tuple<int, int, double>, std::pair<double, int>> mean;
    for (const CommSample& s : samples) {
        auto& [sum, count] = mean[{s.ranks, s.nodes, s.bytes}];
        sum += s.seconds;
        ++count;
    }
    for (const auto& [key, v] : mean) {
        CommSample c;
        std::tie(c.ranks, c.nodes, c.bytes) = key;
        c.seconds = v.first / v.second;
        m.measured << c;
    }
    return m;
}

ComputeModel::ComputeModel()
    : fixedS(kNaN), perSampleS(kNaN), backwardShare(kNaN), dataS(kNaN), relativeRms(kNaN), optimizerShare(kNaN), loaderPerSampleS(kNaN)
{}

Expected<ComputeModel> fitCompute(const QList<ComputeSample>& samples)
{
    QList<ComputeSample> ok;
    for (const ComputeSample& s : samples)
        if (s.localBatch > 0 && s.computeS > 0) ok << s;
    if (ok.isEmpty()) return Error{ErrorCode::Usage, QStringLiteral("no step with a local batch and a compute time to fit"), QString()};
    ComputeModel m;
    // Weighted (relative) least squares of compute ≈ fixed + perSample·b.
    double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
    double minB = ok.first().localBatch, maxB = minB, share = 0, data = 0, optimizer = 0;
    for (const ComputeSample& s : ok) {
        const double w = 1.0 / s.computeS;
        s11 += w * w;
        s12 += w * w * s.localBatch;
        s22 += w * w * s.localBatch * s.localBatch;
        r1 += w;
        r2 += w * s.localBatch;
        minB = std::min(minB, s.localBatch);
        maxB = std::max(maxB, s.localBatch);
        share += s.backwardS / s.computeS;
        optimizer += s.optimizerS / s.computeS;
        data += s.dataS;
    }
    if (maxB > minB) {
        const double det = s11 * s22 - s12 * s12;
        m.fixedS = (r1 * s22 - r2 * s12) / det;
        m.perSampleS = (s11 * r2 - s12 * r1) / det;
    } else {  // one local batch: proportional to it (no fixed part can be told apart)
        m.fixedS = 0.0;
        m.perSampleS = r2 / s22;
    }
    m.backwardShare = share / ok.size();
    m.optimizerShare = optimizer / ok.size();
    m.dataS = data / ok.size();
    m.loaderWorkers = std::all_of(ok.begin(), ok.end(), [](const ComputeSample& s) { return s.dataWorkers > 0; });
    double loader = 0;
    int waited = 0;
    for (const ComputeSample& s : ok)
        if (s.dataS > 0.05 * s.computeS) {
            loader += (s.computeS + s.dataS) / s.localBatch;
            ++waited;
        }
    if (m.loaderWorkers && waited > 0) m.loaderPerSampleS = loader / waited;
    double sq = 0;
    for (const ComputeSample& s : ok) sq += std::pow((m.time(s.localBatch) - s.computeS) / s.computeS, 2);
    m.relativeRms = std::sqrt(sq / ok.size());
    m.samples = int(ok.size());
    return m;
}

Expected<AllreduceModel> fitCollective(const QList<CommSample>& samples, CommSample::Op op)
{
    QList<CommSample> mine;
    for (CommSample s : samples)
        if (s.op == op) {
            if (op != CommSample::Op::Allreduce) s.seconds *= 2;  // half an allreduce each
            s.op = CommSample::Op::Allreduce;
            mine << s;
        }
    return fitAllreduce(mine);
}

double measuredOverlap(const QList<QPair<double, double>>& commAndExposed)
{
    double comm = 0, exposed = 0;
    for (const auto& [c, e] : commAndExposed)
        if (std::isfinite(c) && std::isfinite(e)) {
            comm += c;
            exposed += e;
        }
    return comm > 0 ? std::clamp(1.0 - exposed / comm, 0.0, 1.0) : kNaN;
}

StrategyComm::StrategyComm() : measuredOverlap(kNaN) {}

namespace {
// The layout (ranks, nodes) whose samples stand for `ranks` on `nodes`: that very layout where one
// of its samples `counts`, else the largest measured with as many ranks per node; none: (0, 0).
QPair<int, int> standInLayout(const QList<CommSample>& samples, int ranks, int nodes, const std::function<bool(const CommSample&)>& counts)
{
    QPair<int, int> best{0, 0};
    for (const CommSample& c : samples) {
        if (!counts(c)) continue;
        if (c.ranks == ranks && c.nodes == nodes) return {ranks, nodes};
        if (c.ranks * nodes == ranks * c.nodes && c.nodes > best.second) best = {c.ranks, c.nodes};
    }
    return best;
}
}  // namespace

const CommSample* PerfModel::contentionSample(int ranks, int nodes) const
{
    const auto kernel = [](const CommSample& c) { return c.op == CommSample::Op::Compute && c.aloneS > 0 && c.seconds > 0; };
    const QPair<int, int> layout = standInLayout(contentionSamples, ranks, nodes, kernel);
    const CommSample* last = nullptr;  // the layout's latest measurement
    for (const CommSample& c : contentionSamples)
        if (kernel(c) && c.ranks == layout.first && c.nodes == layout.second) last = &c;
    return last;
}

double PerfModel::computeBetweenCollectives(int ranks, int nodes) const
{
    const CommSample* kernel = contentionSample(ranks, nodes);
    return kernel ? betweenCollectives(*kernel) : 0.0;
}

double PerfModel::betweenCollectives(const CommSample& kernel) const
{
    double sum = 0;
    int timings = 0;
    for (const CommSample& c : waitSamples)
        if (c.afterCompute && c.computeS > 0 && c.kernels > 0 && c.ranks == kernel.ranks && c.nodes == kernel.nodes &&
            c.kernel == kernel.kernel) {
            sum += c.computeS / c.kernels;
            ++timings;
        }
    return timings ? sum / timings : 0.0;
}

double PerfModel::contention(int ranks, int nodes) const
{
    if (ranks <= 1 || !cpuRanks) return 1.0;
    const CommSample* kernel = contentionSample(ranks, nodes);
    if (!kernel) return 1.0;
    const double between = betweenCollectives(*kernel);
    return (between > 0 ? between : kernel->seconds) / contentionReference(*kernel);
}

double PerfModel::contentionReference(const CommSample& kernel, bool* fromRuns) const
{
    // The benchmark's lone rank ran beside sleeping ranks of the same job, and timed the config's
    // step 10–27 % off what the solo runs computed (docs/planner.md, "The contention's
    // reference"); its step between collectives is what training at that layout computes.
    const bool runs = soloCompute && kernel.kernelLocalBatch > 0 && soloCompute->time(kernel.kernelLocalBatch) > 0;
    if (fromRuns) *fromRuns = runs;
    return runs ? soloCompute->time(kernel.kernelLocalBatch) : kernel.aloneS;
}

double PerfModel::arrivalWait(int ranks, int nodes) const
{
    if (ranks <= 1) return 0.0;
    const auto timed = [](const CommSample& c) { return c.afterCompute && c.computeS > 0; };
    const QPair<int, int> layout = standInLayout(waitSamples, ranks, nodes, timed);
    double wait = 0, compute = 0;
    for (const CommSample& c : waitSamples)
        if (timed(c) && c.ranks == layout.first && c.nodes == layout.second) {
            wait += c.waitS;
            compute += c.computeS;
        }
    if (!(compute > 0)) return 0.0;
    // Measured at another rank count: the stragglers' expected maximum at these ranks.
    const double scale = layout.first == ranks || layout.first < 2 ? 1.0 : expectedMaxOfNormals(ranks) / expectedMaxOfNormals(layout.first);
    return wait / compute * scale;
}

double expectedMaxOfNormals(int n)
{
    if (n <= 1) return 0.0;
    // ∫ x · n·φ(x)·Φ(x)^(n−1) dx over [−10, 10], Simpson's rule on 4000 intervals.
    const auto density = [n](double x) {
        const double phi = std::exp(-x * x / 2) / std::sqrt(2 * M_PI), cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
        return x * n * phi * std::pow(cdf, n - 1);
    };
    const int intervals = 4000;
    const double lo = -10, hi = 10, h = (hi - lo) / intervals;
    double sum = density(lo) + density(hi);
    for (int i = 1; i < intervals; ++i) sum += (i % 2 ? 4 : 2) * density(lo + i * h);
    return sum * h / 3;
}

double PerfModel::overlapShare(int ranks, int nodes) const
{
    const auto timed = [](const CommSample& c) { return c.overlapped && c.op == CommSample::Op::Allreduce; };
    const QPair<int, int> layout = standInLayout(overlapSamples, ranks, nodes, timed);
    double hidden = 0, collective = 0;
    for (const CommSample& o : overlapSamples) {
        if (!timed(o) || o.ranks != layout.first || o.nodes != layout.second) continue;
        for (const CommSample& a : waitSamples)
            if (a.afterCompute && a.op == CommSample::Op::Allreduce && a.ranks == o.ranks && a.nodes == o.nodes && a.bytes == o.bytes &&
                a.kernel == o.kernel && a.kernels == o.kernels) {
                hidden += (a.computeS + a.seconds + a.waitS) - (o.computeS + o.seconds);
                collective += a.seconds;
                break;
            }
    }
    return collective > 0 ? std::clamp(hidden / collective, -1.0, 1.0) : kNaN;
}

QList<CommSample> preferAfterCompute(const QList<CommSample>& samples, int* dropped)
{
    const auto key = [](const CommSample& c) { return std::make_tuple(int(c.op), c.ranks, c.nodes); };
    std::set<std::tuple<int, int, int>> loaded;
    for (const CommSample& c : samples)
        if (c.afterCompute) loaded.insert(key(c));
    QList<CommSample> kept;
    int left = 0;
    for (const CommSample& c : samples) {
        if (!c.afterCompute && c.op != CommSample::Op::Compute && loaded.count(key(c))) {
            ++left;
            continue;
        }
        kept << c;
    }
    if (dropped) *dropped = left;
    return kept;
}

StepPrediction PerfModel::step(const QString& strategy, int ranks, int nodes, double localBatch) const
{
    StepPrediction p;
    p.computeS = compute.time(localBatch) * contention(ranks, nodes);
    // ZeRO-1 shards the optimizer's state and step: each rank updates 1/n of the parameters.
    if (strategy == QLatin1String("zero1") && std::isfinite(compute.optimizerShare))
        p.computeS *= 1.0 - compute.optimizerShare * (1.0 - 1.0 / ranks);
    p.dataS = std::isfinite(compute.dataS) ? compute.dataS : 0.0;
    // A loader with workers overlaps the compute: the step waits for what it takes beyond it.
    if (compute.loaderWorkers && std::isfinite(compute.loaderPerSampleS))
        p.dataS = std::max(0.0, compute.loaderPerSampleS * localBatch - p.computeS);
    const StrategyComm sc = strategies.value(strategy);
    const double bucket = strategies.contains(strategy) ? sc.bucketBytes : (strategy == QLatin1String("fused") ? 64e6 : 25e6);
    const bool zero = strategy == QLatin1String("zero1");
    const bool zeroMeasured = zero && reduceScatter.samples > 0 && allgather.samples > 0;
    // ZeRO-1 sends each of its buckets (or, without the trainer's layout, the whole flat vector)
    // twice: the gradients' reduce-scatter and the parameters' allgather, each half an allreduce.
    const auto zeroTime = [&](double bytes) { return (reduceScatter.time(ranks, nodes, bytes) + allgather.time(ranks, nodes, bytes)) / 2; };
    const bool layout = !sc.messageBytes.isEmpty();
    double layoutS = 0;
    if (layout)
        for (double m : sc.messageBytes) layoutS += zeroMeasured ? zeroTime(m) : comm.time(ranks, nodes, m);
    p.commS = layout ? layoutS : zeroMeasured ? zeroTime(gradientBytes) : comm.bucketedTime(ranks, nodes, gradientBytes, bucket);
    if (ranks <= 1) {
        p.exposedS = 0.0;
    } else if (std::isfinite(sc.measuredOverlap)) {
        p.exposedS = (1.0 - sc.measuredOverlap) * p.commS;
    } else if (const double share = strategy != QLatin1String("ddp") ? kNaN
                   : cpuRanks                                        ? overlapShare(ranks, nodes)
                                                                     : 1.0;
               std::isfinite(share)) {
        // ddp: buckets go out while backward runs; the last one cannot hide behind anything. On
        // CPU ranks only the share the benchmark saw hide behind compute does.
        const double backward = p.computeS * (std::isfinite(compute.backwardShare) ? compute.backwardShare : 0.0);
        const double last = comm.time(ranks, nodes, layout ? sc.messageBytes.last() : std::min(bucket, gradientBytes));
        p.exposedS = std::max(last, p.commS - share * std::min(p.commS, backward));
    } else {
        p.exposedS = p.commS;  // fused and zero1 communicate after backward
    }
    // The ranks reach the step's first collective as their compute ends; the first in waits there.
    p.waitS = p.computeS * arrivalWait(ranks, nodes);
    p.commS += p.waitS;
    p.exposedS += p.waitS;
    p.stepS = p.computeS + p.dataS + p.exposedS;
    return p;
}

EpochPrediction::EpochPrediction()
    : localBatch(kNaN), globalBatch(kNaN), steps(kNaN), epochS(kNaN), throughput(kNaN), speedup(kNaN), efficiency(kNaN), nodeHours(kNaN)
{}

EpochPrediction PerfModel::epoch(const QString& strategy, int ranks, int nodes, bool weak, int baseRanks, double baseLocalBatch,
                                 double baseSamplesPerEpoch, double epochs) const
{
    auto at = [&](int n, int nodeCount) {
        EpochPrediction e;
        e.ranks = n;
        e.nodes = nodeCount;
        const double baseGlobal = baseLocalBatch * baseRanks;
        e.localBatch = weak ? baseLocalBatch : baseGlobal / n;
        e.globalBatch = e.localBatch * n;
        const double samples = baseSamplesPerEpoch;
        e.steps = samples / e.globalBatch;
        e.epochS = e.steps * step(strategy, n, nodeCount, e.localBatch).stepS;
        e.throughput = samples / e.epochS;
        e.nodeHours = e.epochS * epochs * nodeCount / 3600.0;
        return e;
    };
    const EpochPrediction base = at(baseRanks, 1);
    EpochPrediction e = at(ranks, nodes);
    // The report's definitions (itwinai §7.4): speedup T(n0)/T(n); efficiency X(n) / (X(n0)·n/n0).
    e.speedup = base.epochS / e.epochS;
    e.efficiency = e.throughput / (base.throughput * double(ranks) / baseRanks);
    return e;
}

}  // namespace scaledesk
