// Real-model conformance: runs each model of a list through tfjit with several jit modes, on
// the inputs TF.js's CPU backend was run with (tfjs_reference.mjs), and compares every output
// with TF.js's by normalized error = max |tfjit - tfjs| / max |tfjs|. Writes a Markdown report.
//
//   model_conformance --list LIST --report FILE [--jit off,auto] [--runs N]
//
// LIST has one tab-separated row per model: id, model path, reference dir, tolerance.
// Exit status: 0 when every model passes in every mode, 1 otherwise, 2 on bad usage.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/dtype.h"
#include "core/status.h"
#include "tfjit/session.h"

namespace tfjit::conformance {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

struct ModelRow {
  std::string id;
  std::string model;
  std::string ref_dir;
  double tolerance = 1e-3;
};

struct TensorRef {
  std::string name;    // what TF.js calls it
  std::string tensor;  // graph tensor
  std::string dtype;   // float32, int32, bool
  std::vector<int64_t> shape;
  std::string file;
};

struct Reference {
  std::vector<TensorRef> inputs, outputs;
  double tfjs_ms = 0;
  std::string exec_mode;
};

struct ModeResult {
  std::string mode;
  bool ok = false;
  std::string error;  // load/run failure or the worst mismatch
  double max_norm_err = 0;
  double first_ms = 0;   // includes compilation
  double median_ms = 0;  // steady state
  RunStats stats;
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<TensorRef> ParseTensors(const Value& list) {
  std::vector<TensorRef> out;
  for (const Value& v : list.list_value().values()) {
    const auto& f = v.struct_value().fields();
    TensorRef t;
    t.name = f.at("name").string_value();
    t.tensor = f.at("tensor").string_value();
    t.dtype = f.at("dtype").string_value();
    t.file = f.at("file").string_value();
    for (const Value& d : f.at("shape").list_value().values()) {
      t.shape.push_back(static_cast<int64_t>(d.number_value()));
    }
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<Reference> ReadReference(const std::string& dir) {
  absl::StatusOr<std::string> text = ReadFile(dir + "/reference.json");
  if (!text.ok()) return text.status();
  Struct root;
  auto parsed = google::protobuf::util::JsonStringToMessage(*text, &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(dir, "/reference.json: ", parsed.ToString()));
  }
  const auto& f = root.fields();
  Reference ref;
  ref.inputs = ParseTensors(f.at("inputs"));
  ref.outputs = ParseTensors(f.at("outputs"));
  ref.tfjs_ms = f.at("firstRunMs").number_value();
  ref.exec_mode = f.at("execMode").string_value();
  return ref;
}

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The raw file of `t` (TF.js dtypes: float32, int32, bool as one byte) as doubles.
absl::StatusOr<std::vector<double>> ReadValues(const std::string& dir, const TensorRef& t) {
  absl::StatusOr<std::string> bytes = ReadFile(dir + "/" + t.file);
  if (!bytes.ok()) return bytes.status();
  const int64_t n = NumElements(t.shape);
  const size_t width = t.dtype == "bool" ? 1 : 4;
  if (bytes->size() != static_cast<size_t>(n) * width) {
    return absl::DataLossError(
        absl::StrFormat("%s/%s: %d bytes, expected %d", dir, t.file, bytes->size(), n * width));
  }
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* p = bytes->data() + i * width;
    if (t.dtype == "float32") {
      float x;
      std::memcpy(&x, p, 4);
      v[i] = x;
    } else if (t.dtype == "int32") {
      int32_t x;
      std::memcpy(&x, p, 4);
      v[i] = x;
    } else {
      v[i] = *p != 0;
    }
  }
  return v;
}

// A tensor of the graph's dtype holding `values` (TF.js feeds uint8 images as int32).
absl::StatusOr<Tensor> MakeTensor(DType dtype, const std::vector<int64_t>& dims,
                                  const std::vector<double>& values) {
  Tensor t(dtype, dims);
  bool ok = DispatchNumeric(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i]);
  });
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("cannot feed dtype ", DTypeName(dtype)));
  return t;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  DispatchNumeric(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(in[i]);
  });
  return v;
}

double Millis(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

ModeResult RunMode(const ModelRow& row, const Reference& ref, JitMode jit, bool autofix,
                   const char* name, int runs) {
  ModeResult r;
  r.mode = name;
  SessionOptions options;
  options.jit = jit;
  options.autofix = autofix;
  auto session = Session::Load(row.model, options);
  if (!session.ok()) {
    r.error = absl::StrCat("load: ", StatusToString(session.status()));
    return r;
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  const std::vector<InputInfo> infos = (*session)->Inputs();
  for (const TensorRef& in : ref.inputs) {
    absl::StatusOr<std::vector<double>> values = ReadValues(row.ref_dir, in);
    if (!values.ok()) {
      r.error = std::string(values.status().message());
      return r;
    }
    DType dtype = in.dtype == "float32" ? DType::kFloat32
                  : in.dtype == "bool"  ? DType::kBool
                                        : DType::kInt32;
    for (const InputInfo& info : infos) {
      if (info.tensor == in.tensor || info.name == in.tensor || info.name == in.name) {
        dtype = info.dtype;
      }
    }
    absl::StatusOr<Tensor> t = MakeTensor(dtype, in.shape, *values);
    if (!t.ok()) {
      r.error = std::string(t.status().message());
      return r;
    }
    feeds.push_back({in.tensor, *t});
  }
  std::vector<std::string> fetches;
  for (const TensorRef& out : ref.outputs) fetches.push_back(out.tensor);

  std::vector<Tensor> outputs;
  std::vector<double> times;
  for (int i = 0; i <= runs; ++i) {
    RunStats stats;
    const auto start = std::chrono::steady_clock::now();
    auto result = (*session)->Run(feeds, fetches, &stats);
    const double ms = Millis(start);
    if (!result.ok()) {
      r.error = absl::StrCat("run: ", StatusToString(result.status()));
      return r;
    }
    if (i == 0) {
      r.first_ms = ms;
    } else {
      times.push_back(ms);
    }
    // The last run's outputs and statistics: the steady state (a first run may compile, or
    // fall back to kernels for a cluster the session then splits).
    if (i == runs) {
      r.stats = stats;
      outputs = *std::move(result);
    }
  }
  std::sort(times.begin(), times.end());
  r.median_ms = times.empty() ? r.first_ms : times[times.size() / 2];

  r.ok = true;
  for (size_t k = 0; k < ref.outputs.size(); ++k) {
    const TensorRef& want = ref.outputs[k];
    const Tensor& got = outputs[k];
    if (got.dims() != want.shape) {
      r.ok = false;
      r.error = absl::StrCat(want.tensor, ": shape ", got.ShapeString(), ", TF.js has [",
                             absl::StrJoin(want.shape, ","), "]");
      break;
    }
    absl::StatusOr<std::vector<double>> expected = ReadValues(row.ref_dir, want);
    if (!expected.ok()) {
      r.ok = false;
      r.error = std::string(expected.status().message());
      break;
    }
    const std::vector<double> actual = ToDoubles(got);
    double max_ref = 0, max_diff = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      max_ref = std::max(max_ref, std::fabs((*expected)[i]));
      const double d = std::fabs(actual[i] - (*expected)[i]);
      // NaN anywhere is a mismatch unless both are NaN.
      if (std::isnan(d) && !(std::isnan(actual[i]) && std::isnan((*expected)[i]))) {
        max_diff = INFINITY;
      } else if (!std::isnan(d)) {
        max_diff = std::max(max_diff, d);
      }
    }
    const double err = max_ref > 0 ? max_diff / max_ref : max_diff;
    if (err > r.max_norm_err || std::isnan(err)) r.max_norm_err = err;
    if (!(err <= row.tolerance) && r.ok) {
      r.ok = false;
      r.error =
          absl::StrFormat("%s: normalized error %.3g > %.3g", want.tensor, err, row.tolerance);
    }
  }
  return r;
}

absl::StatusOr<std::vector<ModelRow>> ReadList(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  std::vector<ModelRow> rows;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    if (line[0] == '#') continue;
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (cols.size() < 4) return absl::InvalidArgumentError(absl::StrCat(path, ": bad row ", line));
    ModelRow row{cols[0], cols[1], cols[2], 1e-3};
    if (!absl::SimpleAtod(cols[3], &row.tolerance)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": bad tolerance in ", line));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

int Main(int argc, char** argv) {
  std::string list, report;
  std::vector<std::string> modes = {"off", "auto"};
  // Models that must compile whole (every node) in the +autofix modes: the corpus models with
  // TF1 loops and NMS post-processing (issue 21).
  std::vector<std::string> whole;
  int runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], v = argv[i + 1];
    if (flag == "--list")
      list = v;
    else if (flag == "--report")
      report = v;
    else if (flag == "--jit")
      modes = absl::StrSplit(v, ',', absl::SkipEmpty());
    else if (flag == "--runs" && absl::SimpleAtoi(v, &runs) && runs >= 0)
      continue;
    else if (flag == "--expect-whole")
      whole = absl::StrSplit(v, ',', absl::SkipEmpty());
    else {
      std::fprintf(stderr,
                   "usage: model_conformance --list LIST --report FILE [--jit off,auto] "
                   "[--runs N] [--expect-whole ID,...]\n  a mode may end in +autofix "
                   "(auto+autofix: the beyond-TF fixes on); --expect-whole: those "
                   "models must compile every node in the +autofix modes\n");
      return 2;
    }
  }
  if (list.empty() || report.empty()) {
    std::fprintf(stderr, "model_conformance: --list and --report are required\n");
    return 2;
  }
  absl::StatusOr<std::vector<ModelRow>> rows = ReadList(list);
  if (!rows.ok()) {
    std::fprintf(stderr, "model_conformance: %s\n", std::string(rows.status().message()).c_str());
    return 2;
  }
  std::string table =
      absl::StrCat("| model | nodes | clusters (", absl::StrJoin(modes, " / "),
                   ") | % nodes compiled (", absl::StrJoin(modes, " / "), ") | max normErr (",
                   absl::StrJoin(modes, " / "), ") | tolerance | latency ms (",
                   absl::StrJoin(modes, " / "), ") | first run ms (", absl::StrJoin(modes, " / "),
                   ") | TF.js cpu ms | result |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n");
  int passed = 0, failed = 0;
  std::string failures;
  for (const ModelRow& row : *rows) {
    absl::StatusOr<Reference> ref = ReadReference(row.ref_dir);
    std::vector<ModeResult> results;
    if (!ref.ok()) {
      ModeResult r;
      r.error = std::string(ref.status().message());
      results.push_back(r);
    } else {
      for (const std::string& mode : modes) {
        // "auto+autofix": the mode with the beyond-TF fixes on.
        const bool autofix = absl::EndsWith(mode, "+autofix");
        const std::string m = autofix ? mode.substr(0, mode.size() - 8) : mode;
        const JitMode jit = m == "none"  ? JitMode::kNone
                            : m == "off" ? JitMode::kOff
                            : m == "all" ? JitMode::kAll
                                         : JitMode::kAuto;
        results.push_back(RunMode(row, *ref, jit, autofix, mode.c_str(), runs));
      }
    }
    bool ok = true;
    std::vector<std::string> errs, lat, first, clusters, share;
    int nodes = 0;
    for (const ModeResult& r : results) {
      const RunStats& s = r.stats;
      nodes = std::max(nodes, s.nodes_total);
      clusters.push_back(absl::StrCat(s.clusters));
      share.push_back(s.nodes_total > 0
                          ? absl::StrFormat("%.1f", 100.0 * s.nodes_compiled / s.nodes_total)
                          : "-");
      ok = ok && r.ok;
      if (r.ok && absl::EndsWith(r.mode, "+autofix") &&
          std::find(whole.begin(), whole.end(), row.id) != whole.end() &&
          r.stats.nodes_compiled < r.stats.nodes_total) {
        ok = false;
        absl::StrAppend(&failures, "- ", row.id, " (", r.mode, "): compiles ",
                        r.stats.nodes_compiled, " of ", r.stats.nodes_total,
                        " nodes, not all (--expect-whole)\n");
      }
      errs.push_back(r.ok || r.max_norm_err > 0 ? absl::StrFormat("%.2g", r.max_norm_err) : "-");
      lat.push_back(r.median_ms > 0 ? absl::StrFormat("%.1f", r.median_ms) : "-");
      first.push_back(r.first_ms > 0 ? absl::StrFormat("%.0f", r.first_ms) : "-");
      if (!r.ok) absl::StrAppend(&failures, "- ", row.id, " (", r.mode, "): ", r.error, "\n");
    }
    absl::StrAppend(&table, "| ", row.id, " | ", nodes, " | ", absl::StrJoin(clusters, " / "),
                    " | ", absl::StrJoin(share, " / "), " | ", absl::StrJoin(errs, " / "), " | ",
                    absl::StrFormat("%.0e", row.tolerance), " | ", absl::StrJoin(lat, " / "), " | ",
                    absl::StrJoin(first, " / "), " | ",
                    ref.ok() ? absl::StrFormat("%.0f", ref->tfjs_ms) : "-", " | ",
                    ok ? "pass" : "FAIL", " |\n");
    (ok ? passed : failed)++;
    std::printf("%-28s %s\n", row.id.c_str(), ok ? "pass" : "FAIL");
    std::fflush(stdout);
  }
  std::ofstream out(report);
  out << table;
  if (!failures.empty()) out << "\nFailures:\n\n" << failures;
  out.close();
  std::printf("%s", failures.c_str());
  std::printf("report: %s\n%d passed, %d failed\n", report.c_str(), passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tfjit::conformance

int main(int argc, char** argv) { return tfjit::conformance::Main(argc, argv); }
