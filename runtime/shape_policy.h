// Which executable serves a launch of a compiled cluster, by its inputs' shapes
// (SessionOptions::shapes; docs/decisions.md, "Symbolic batch size").
//
// XLA compiles a cluster once per distinct input shape, so a server fed batch sizes 1..64
// compiles 64 times. Here, under the default policy (auto), a cluster compiles for the first
// shape it sees, as XLA does; when a shape arrives that differs from a compiled one only in
// dim 0 of some inputs (the batch), one symbolic executable is compiled that serves every
// batch size >= 2 of that shape class, and every later size uses it. Batch sizes 0 and 1 stay
// static (a size-1 dim is special in too many places), as do clusters that cannot be symbolic
// (hlo::Symbolize says why; the launch then compiles statically). Static executables per
// cluster are capped as TF's "megamorphic" brake does: past the cap, a cluster that compiles
// more than it runs sends new shapes to the runtime's kernels.
#ifndef TFJIT_RUNTIME_SHAPE_POLICY_H_
#define TFJIT_RUNTIME_SHAPE_POLICY_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "compiler/hlo/row_analysis.h"
#include "tfjit/session.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// Static executables one cluster may have under ShapeMode::kAuto before TF's brake applies:
// past it, a new shape compiles only if the cluster ran at least kMinLaunchesPerCompile times
// per compile so far; otherwise it runs on kernels.
inline constexpr int kMaxStaticShapes = 8;
inline constexpr int64_t kMinLaunchesPerCompile = 50;
// The smallest batch size a symbolic executable serves.
inline constexpr int64_t kMinSymbolicBatch = 2;
// The batch sizes a symbolic compile lowers the cluster at (the first is the representative,
// held in the compiled module's dims: a prime no model uses as a static dim). The small ones
// catch a builder's clamps (min(b, 8) is affine at 1021 and 1022 but not at 2 and 3).
inline constexpr std::array<int64_t, 4> kBatchProbes = {1021, 1022, 2, 3};

struct ShapeChoice {
  enum class Kind {
    kStatic,    // an executable for exactly these shapes
    kSymbolic,  // the symbolic executable of `class_key`
    kTooMany,   // ShapeMode::kAuto's cap: run on kernels
  };
  Kind kind = Kind::kStatic;
  std::vector<bool> batch_inputs;  // kSymbolic: the inputs whose dim 0 is the batch size
  int64_t batch = 0;               // kSymbolic: this launch's batch size
  // kSymbolic: the inputs' shapes with the batch written ?b ("|f32?b,64,64,3|f32[4]"), the
  // shape part of the compilation-cache key.
  std::string class_key;
};

// One cluster's shapes: what it compiled statically and its symbolic classes. Thread-safe.
// Lookup order: a symbolic class whose guard holds, then an exact static executable, then a
// new class or a static compile. The issue asked for exact first; a class goes first so that,
// once it exists, every batch size >= 2 runs the one executable (a size compiled statically
// before the class existed would otherwise keep its own code, and its results could differ in
// the last bits from its neighbours'). The static executable of that first size is then
// unused; it costs one compile, already paid.
class ClusterShapes {
 public:
  // The choice for a launch with inputs of `dims`. `eligible[i]`: input i may carry the batch
  // size (a data input of rank >= 1: not a variable's value or a must-be-constant input).
  ShapeChoice Choose(ShapeMode mode, const std::vector<std::vector<int64_t>>& dims,
                     const std::vector<bool>& eligible);
  // The symbolic class `class_key` did not compile (`reason`): its shapes compile statically
  // from now on. Returns false when it was marked already.
  bool MarkFailed(const std::string& class_key, const std::string& reason);
  // A launch of class `class_key` ran on its symbolic executable (`bucket` 0) or, padded, on
  // the static executable of batch size `bucket` (SessionOptions::batch_buckets).
  void MarkServed(const std::string& class_key, int64_t bucket);
  // Whether class `class_key` keeps batch rows apart (hlo::AnalyzeRows on its symbolic module),
  // so that it may run padded to a bucket; null until SetRows.
  std::shared_ptr<const hlo::RowAnalysis> RowsOf(const std::string& class_key) const;
  void SetRows(const std::string& class_key, hlo::RowAnalysis rows);
  // "static x3, symbolic (batch >= 2) x1, buckets 4, 8" for explain and profiles; the
  // symbolic classes that failed, and the classes that could not use buckets, with their
  // reasons, on lines of their own.
  std::string Summary() const;

 private:
  struct Class {
    std::vector<bool> mask;
    std::vector<std::vector<int64_t>> dims;  // the batch inputs' dim 0 is unused
    std::string key;
    bool failed = false;
    std::string reason;
    bool served_symbolic = false;
    std::shared_ptr<const hlo::RowAnalysis> rows;
  };
  // The batch size `dims` has in `c`, or -1 when they are not of its class.
  static int64_t BatchIn(const Class& c, const std::vector<std::vector<int64_t>>& dims);

  mutable std::mutex mu_;
  std::vector<std::vector<std::vector<int64_t>>> static_;
  std::vector<Class> classes_;
  std::set<int64_t> buckets_;  // bucket sizes that served a launch
  int64_t launches_ = 0;
};

// Buckets with padding (SessionOptions::batch_buckets, sorted): the smallest bucket that holds
// `batch` rows, or 0 when none does.
int64_t BucketFor(const std::vector<int64_t>& buckets, int64_t batch);

// `t` (rank >= 1, a numeric dtype) with dim 0 grown to `rows` (>= its own, > 0). The new rows
// repeat its last row, so that they hold values of the run's own domain (indices in range,
// checks that hold); under SetPaddingForTesting(kNaN) floating-point rows are NaN instead
// (tests that padding cannot reach the real rows).
Tensor PadRows(const Tensor& t, int64_t rows);
// The first `rows` rows of `t` (rank >= 1).
Tensor FirstRows(const Tensor& t, int64_t rows);

enum class PaddingFill { kRepeatLastRow, kNaN };
void SetPaddingForTesting(PaddingFill fill);

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_SHAPE_POLICY_H_
