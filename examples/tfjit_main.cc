// tfjit: the model-runner CLI (run, train, explain, bench, demo, ops). See README.md for usage.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/dtype.h"
#include "core/status.h"
#include "examples/cli_output.h"
#include "runtime/io/npy.h"
#include "serving/server.h"
#include "tfjit/ops.h"
#include "tfjit/session.h"

namespace tfjit::cli {
namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  tfjit run MODEL [--input NAME=FILE.npy]... [--random-inputs SEED] [--fetch NAME]...\n"
    "            [--shape NAME=d0,d1,...]...\n"
    "            [--target NODE]... [--init NODE]...\n"
    "            [--output-dir DIR] [--jit none|off|auto|all] [--device cpu:0]\n"
    "            [--shapes static|auto|symbolic] [--batch-buckets B1,B2,...]\n"
    "            [--logical-cpus N] [--threads N] [--autofix] [--repeat N] [--dump-dir DIR]\n"
    "            [--backend cpu|interpreter] [--signature NAME] [--tags serve,...]\n"
    "            [--timeout SECONDS] [--memory-limit BYTES] [--cache-dir DIR] [--profile]\n"
    "            --profile: the last run's time and bytes per cluster, per kernel node, and\n"
    "                       per compiled kernel inside clusters (with GFLOP/s and GB/s)\n"
    "  tfjit serve --model_name=NAME --model_base_path=DIR --rest_api_port=PORT\n"
    "            [--port=GRPC_PORT] [--model_config_file=FILE]\n"
    "            [--model_config_file_poll_wait_seconds=N] [--file_system_poll_wait_seconds=N]\n"
    "            [--enable_batching [--batching_parameters_file=FILE]]\n"
    "            [--monitoring_config_file=FILE] [--rest_api_timeout_in_ms=MS]\n"
    "            [--jit MODE] [--threads N] [--cache-dir DIR] [--shapes MODE]\n"
    "            TF Serving's tensorflow_model_server: the same flags, config files, REST\n"
    "            and gRPC APIs (docs/USER_GUIDE.md 2.7)\n"
    "  tfjit explain MODEL [--jit none|off|auto|all] [--fetch NAME]... [--target OP]...\n"
    "            [--random-inputs SEED] [--input NAME=FILE.npy]... [--shape NAME=d0,..]...\n"
    "            [--format text|dot|svg] [--output FILE] [--batch-sizes B1,B2,...]\n"
    "            --batch-sizes: random inputs at each batch size in turn, then each\n"
    "                       cluster's compiles and executables by shape class\n"
    "            dot/svg: the graph with its clusters coloured, every node left out\n"
    "            labelled with its reason (svg needs Graphviz)\n"
    "            with inputs: also compiles, printing each cluster's compile time\n"
    "  tfjit bench MODEL [--threads N] [--repeat N] [--input NAME=FILE.npy]...\n"
    "            [--random-inputs SEED] [--shape NAME=d0,..]... [--fetch NAME]...\n"
    "            [--cache-dir DIR]\n"
    "            median latency, --jit off vs auto\n"
    "  tfjit train MODEL --steps N [--signature train | --target OP]... [--init OP]...\n"
    "            [--input NAME=FILE.npy]... [--batches NAME=FILE.npy]... [--fetch LOSS]...\n"
    "            [--every K] [--save PREFIX] [--profile] [--jit ...] [--autofix] [--threads N]\n"
    "            runs N training steps in one session (variables persist): --input feeds the\n"
    "            same batch every step, --batches feeds step s the slice s (mod its first\n"
    "            dim); every K steps a line with the step, each scalar output (the loss),\n"
    "            steps/s and examples/s; --save writes a SavedModel's trained variables as\n"
    "            a TF checkpoint (copy it over DIR/variables/variables); --profile: the last\n"
    "            step's clusters and kernels, bytes copied and peak tensor memory\n"
    "  tfjit demo DIR      run DIR/demo_mlp.pbtxt uncompiled and compiled, compare\n"
    "  tfjit ops [OP]      every op tfjit knows: family, fallback kernel, compiles for CPU and\n"
    "                      GPU, dtypes; with OP, its signature, attributes and constant inputs\n"
    "  tfjit --version     the version, and the LLVM it generates code with\n"
    "MODEL is a TF GraphDef (.pb binary or .pbtxt text), a SavedModel directory, or a TF.js\n"
    "model.json. Inputs and outputs are signature keys or tensor names 'node' / 'node:k'.\n"
    "TensorFlow's environment switches apply, and flags given here override them:\n"
    "  TF_XLA_FLAGS='--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=4\n"
    "                --tf_xla_max_cluster_size=N --tf_xla_cpu_global_jit'\n"
    "  XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_pass_re=REGEX'  (the lowered HLO, HLO\n"
    "                after each pass, LLVM IR, PTX)\n"
    "  XLA_FLAGS='--xla_backend_optimization_level=0..3'  (LLVM's level for CPU clusters;\n"
    "                default 3, lower compiles faster)\n";

struct Args {
  std::string command, model;
  std::vector<std::pair<std::string, std::string>> inputs;
  // train: NAME=FILE.npy whose first dim indexes the steps' batches.
  std::vector<std::pair<std::string, std::string>> batches;
  int64_t steps = 0;  // train: --steps
  int64_t every = 0;  // train: --every (0: about ten lines)
  std::string save;   // train: --save PREFIX (a SavedModel's variables, after the steps)
  std::optional<uint64_t> random_seed;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;  // nodes run with every run (e.g. a variable update)
  std::vector<std::string> inits;    // nodes run once before the runs (e.g. an initializer)
  std::string output_dir;
  std::string format = "text";  // explain: text, dot or svg
  std::string output;           // explain: the file to write ("" = standard output)
  SessionOptions options;
  int repeat = 1;
  bool profile = false;     // run: time every cluster and kernel of the last run
  int64_t unknown_dim = 1;  // size given to -1 dims of random inputs
  // --shape NAME=d0,d1,...: the whole shape of a random input (empty: a scalar).
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  std::vector<int64_t> batch_sizes;  // explain --batch-sizes
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "tfjit: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", StatusToString(status).c_str());
  return 1;
}

// Returns an error message for bad usage, or "" on success.
std::string ParseArgs(int argc, char** argv, Args* args) {
  if (argc < 3) return "missing command or model";
  args->command = argv[1];
  args->model = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (flag == "--autofix") {
      args->options.autofix = true;
    } else if (flag == "--profile") {
      args->profile = true;
    } else if (!value(&v)) {
      return absl::StrCat(flag == "" ? "empty argument" : "unknown flag or missing value: ", flag);
    } else if (flag == "--input") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) return "--input takes NAME=FILE.npy";
      args->inputs.push_back({v.substr(0, eq), v.substr(eq + 1)});
    } else if (flag == "--batches") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) return "--batches takes NAME=FILE.npy";
      args->batches.push_back({v.substr(0, eq), v.substr(eq + 1)});
    } else if (flag == "--save") {
      args->save = v;
    } else if (flag == "--steps") {
      if (!absl::SimpleAtoi(v, &args->steps) || args->steps < 1) {
        return "--steps takes a positive integer";
      }
    } else if (flag == "--every") {
      if (!absl::SimpleAtoi(v, &args->every) || args->every < 1) {
        return "--every takes a positive integer";
      }
    } else if (flag == "--random-inputs") {
      uint64_t seed;
      if (!absl::SimpleAtoi(v, &seed)) return "--random-inputs takes an integer seed";
      args->random_seed = seed;
    } else if (flag == "--shape") {
      const size_t eq = v.rfind('=');
      if (eq == std::string::npos || eq == 0)
        return "--shape takes NAME=d0,d1,... (empty: a scalar)";
      std::vector<int64_t> dims;
      for (absl::string_view d : absl::StrSplit(v.substr(eq + 1), ',', absl::SkipEmpty())) {
        int64_t x;
        if (!absl::SimpleAtoi(d, &x) || x < 0) return "--shape dims are integers >= 0";
        dims.push_back(x);
      }
      args->shapes.push_back({v.substr(0, eq), dims});
    } else if (flag == "--fetch") {
      args->fetches.push_back(v);
    } else if (flag == "--target") {
      args->targets.push_back(v);
    } else if (flag == "--init") {
      args->inits.push_back(v);
    } else if (flag == "--output-dir") {
      args->output_dir = v;
    } else if (flag == "--format") {
      if (v != "text" && v != "dot" && v != "svg") return "--format takes text, dot or svg";
      args->format = v;
    } else if (flag == "--output") {
      args->output = v;
    } else if (flag == "--dump-dir") {
      args->options.dump_dir = v;
    } else if (flag == "--cache-dir") {
      args->options.compile_cache_dir = v;
    } else if (flag == "--jit") {
      StatusOr<JitMode> mode = ParseJitMode(v);
      if (!mode.ok()) return absl::StrCat("--jit: ", mode.status().message());
      args->options.jit = *mode;
    } else if (flag == "--shapes") {
      StatusOr<ShapeMode> mode = ParseShapeMode(v);
      if (!mode.ok()) return absl::StrCat("--shapes: ", mode.status().message());
      args->options.shapes = *mode;
    } else if (flag == "--batch-sizes") {
      for (absl::string_view d : absl::StrSplit(v, ',', absl::SkipEmpty())) {
        int64_t b = 0;
        if (!absl::SimpleAtoi(d, &b) || b < 0) {
          return absl::StrCat("--batch-sizes takes batch sizes >= 0 separated by commas, got '", v,
                              "'");
        }
        args->batch_sizes.push_back(b);
      }
    } else if (flag == "--batch-buckets") {
      args->options.batch_buckets.clear();
      for (absl::string_view d : absl::StrSplit(v, ',', absl::SkipEmpty())) {
        int64_t b = 0;
        if (!absl::SimpleAtoi(d, &b) || b < 2) {
          return absl::StrCat("--batch-buckets takes batch sizes >= 2 separated by commas, got '",
                              v, "'");
        }
        args->options.batch_buckets.push_back(b);
      }
    } else if (flag == "--backend") {
      args->options.backend = v;
    } else if (flag == "--device") {
      args->options.device = v;
    } else if (flag == "--signature") {
      args->options.signature = v;
    } else if (flag == "--tags") {
      args->options.tags = absl::StrSplit(v, ',', absl::SkipEmpty());
    } else if (flag == "--logical-cpus") {
      if (!absl::SimpleAtoi(v, &args->options.logical_cpus) || args->options.logical_cpus < 1) {
        return "--logical-cpus takes a positive integer";
      }
    } else if (flag == "--threads") {  // inter-op and intra-op threads (0 = one per core)
      int n;
      if (!absl::SimpleAtoi(v, &n) || n < 0 || n > 1024) {
        return "--threads takes a number of threads from 0 (one per core) to 1024";
      }
      args->options.inter_op_threads = args->options.intra_op_threads = n;
    } else if (flag == "--timeout") {  // each run's deadline: DEADLINE_EXCEEDED past it
      double seconds;
      if (!absl::SimpleAtod(v, &seconds) || !(seconds > 0) || seconds > 1e9) {
        return "--timeout takes a positive number of seconds";
      }
      args->options.run_timeout_ms = std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000));
    } else if (flag == "--memory-limit") {  // cap on live tensor bytes: RESOURCE_EXHAUSTED
      if (!absl::SimpleAtoi(v, &args->options.memory_limit_bytes) ||
          args->options.memory_limit_bytes < 1) {
        return "--memory-limit takes a positive number of bytes";
      }
    } else if (flag == "--repeat") {
      if (!absl::SimpleAtoi(v, &args->repeat) || args->repeat < 1) {
        return "--repeat takes a positive integer";
      }
    } else {
      return absl::StrCat("unknown flag: ", flag);
    }
  }
  return "";
}

// Builds the feeds: files given with --input, then random values for the other placeholders
// when --random-inputs is set (unknown dims become args.unknown_dim).
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> MakeFeeds(const Args& args,
                                                                      const Session& session) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, file] : args.inputs) {
    TFJIT_ASSIGN_OR_RETURN(Tensor t, runtime::ReadNpy(file));
    feeds.push_back({name, t});
  }
  if (!args.random_seed.has_value()) return feeds;
  // "x" and "x:0" name the same input (some signatures spell their keys "x:0").
  auto base = [](absl::string_view n) {
    return absl::EndsWith(n, ":0") ? n.substr(0, n.size() - 2) : n;
  };
  uint64_t k = 0;
  for (const InputInfo& in : session.Inputs()) {
    const bool given = std::any_of(feeds.begin(), feeds.end(), [&](const auto& f) {
      return base(f.first) == base(in.name) || base(f.first) == base(in.tensor);
    });
    if (given) continue;
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? args.unknown_dim : d;
    for (const auto& [name, shape] : args.shapes) {
      if (base(name) == base(in.name) || base(name) == base(in.tensor)) dims = shape;
    }
    feeds.push_back({in.name, RandomTensor(in.dtype, dims, *args.random_seed + 7919 * k++)});
  }
  return feeds;
}

struct Outcome {
  std::vector<Tensor> outputs;
  RunStats first;     // the first run (includes compilation)
  RunStats profiled;  // with --profile: the last run
  double median_run_ms = 0, min_run_ms = 0;
  int64_t flops = 0;  // RunStats::flops of the last run
};

absl::StatusOr<Outcome> RunRepeated(Session& session, const Args& args,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches) {
  Outcome outcome;
  std::vector<double> times;
  if (!args.inits.empty()) {
    TFJIT_RETURN_IF_ERROR(session.Run(feeds, {}, args.inits).status());
  }
  // Runs that compiled nothing time the model alone. A run that compiled is a sample only
  // when no other run exists (--repeat 1): its time less the compile time, at least 0, which
  // is an estimate when clusters compiled concurrently on the inter-op threads (the summed
  // compile times then exceed the time they took).
  double compiling_run_ms = 0;
  for (int r = 0; r < args.repeat; ++r) {
    RunStats stats;
    RunOptions run_options;
    run_options.profile = args.profile && r == args.repeat - 1;  // the last run, compiled
    TFJIT_ASSIGN_OR_RETURN(outcome.outputs,
                           session.Run(run_options, feeds, fetches, args.targets, &stats));
    if (run_options.profile) outcome.profiled = stats;
    if (r == 0) outcome.first = stats;
    if (stats.compile_ms > 0) {
      compiling_run_ms = std::max(0.0, stats.run_ms - stats.compile_ms);
    } else {
      times.push_back(stats.run_ms);
    }
    outcome.flops = stats.flops;
  }
  if (times.empty()) times.push_back(compiling_run_ms);
  std::sort(times.begin(), times.end());
  outcome.median_run_ms = times[times.size() / 2];
  outcome.min_run_ms = times.front();
  return outcome;
}

// --profile: the last run's units, slowest first (at most 25 lines, then the rest summed), the
// kernels inside the five slowest compiled clusters (20 lines each), and how the run's time
// splits between compiled clusters and everything else.
void PrintProfile(const RunStats& stats) {
  double cluster_ms = 0, kernel_ms = 0;
  for (const UnitProfile& p : stats.profile) (p.compiled ? cluster_ms : kernel_ms) += p.ms;
  const double run_ms = std::max(stats.run_ms, 1e-9);
  std::printf("profile of the last run (%.3f ms):\n", stats.run_ms);
  std::printf("  %8s %6s %6s %10s %10s  %-10s %s\n", "ms", "%", "calls", "in MB", "out MB", "kind",
              "name");
  double rest_ms = 0;
  int rest = 0;
  for (size_t i = 0; i < stats.profile.size(); ++i) {
    const UnitProfile& p = stats.profile[i];
    if (i >= 25) {
      rest_ms += p.ms;
      ++rest;
      continue;
    }
    std::printf("  %8.3f %6.1f %6d %10.3f %10.3f  %-10s %s\n", p.ms, 100 * p.ms / run_ms, p.calls,
                p.input_bytes / 1e6, p.output_bytes / 1e6, p.kind.c_str(), p.name.c_str());
  }
  if (rest > 0)
    std::printf("  %8.3f %6.1f  (%d more units)\n", rest_ms, 100 * rest_ms / run_ms, rest);
  // Inside the slowest compiled clusters: their kernels, slowest first (XLA's HLO profile).
  int clusters_shown = 0;
  for (const UnitProfile& p : stats.profile) {
    if (p.kernels.empty() || clusters_shown == 5) continue;
    ++clusters_shown;
    double kernels_ms = 0;
    for (const KernelProfile& k : p.kernels) kernels_ms += k.ms;
    std::printf(
        "  kernels of %s (%.3f ms, %zu kernels; %.3f ms outside them: the call's "
        "setup, copies, loop control):\n",
        p.name.c_str(), p.ms, p.kernels.size(), std::max(0.0, p.ms - kernels_ms));
    if (!p.shapes.empty()) std::printf("    executables: %s\n", p.shapes.c_str());
    std::printf("    %8s %6s %6s %9s %8s %8s  %-18s %s\n", "ms", "%", "calls", "MB", "GFLOP/s",
                "GB/s", "kernel", "ops");
    double rest_kernel_ms = 0;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      const KernelProfile& k = p.kernels[i];
      if (i >= 20) {
        rest_kernel_ms += k.ms;
        continue;
      }
      const double seconds = std::max(k.ms, 1e-9) / 1e3;
      std::string gflops = k.flops > 0 ? absl::StrFormat("%.1f", k.flops / seconds / 1e9) : "-";
      std::printf("    %8.3f %6.1f %6lld %9.3f %8s %8.1f  %-18s %s\n", k.ms, 100 * k.ms / run_ms,
                  static_cast<long long>(k.calls), k.bytes / 1e6, gflops.c_str(),
                  k.bytes / seconds / 1e9, k.name.c_str(), k.ops.c_str());
    }
    if (p.kernels.size() > 20) {
      std::printf("    %8.3f %6.1f  (%zu more kernels)\n", rest_kernel_ms,
                  100 * rest_kernel_ms / run_ms, p.kernels.size() - 20);
    }
  }
  const double outside = std::max(0.0, stats.run_ms - cluster_ms);
  std::printf(
      "  compiled clusters %.3f ms (%.1f%%), kernels %.3f ms (%.1f%%), outside compiled "
      "code %.3f ms (%.1f%%: kernels, scheduling, feeds and fetches)\n",
      cluster_ms, 100 * cluster_ms / run_ms, kernel_ms, 100 * kernel_ms / run_ms, outside,
      100 * outside / run_ms);
}

// The run's totals, then each cluster's compile time ("cluster_0:12.3", ":disk" when it was
// loaded from the disk cache).
std::string SummaryLine(const Outcome& o, JitMode jit) {
  std::string line = absl::StrFormat(
      "summary: jit=%s clusters=%d nodes_compiled=%d/%d compile_ms=%.2f run_ms=%.4f",
      JitModeName(jit), o.first.clusters, o.first.nodes_compiled, o.first.nodes_total,
      o.first.compile_ms, o.median_run_ms);
  if (!o.first.compiles.empty()) {
    absl::StrAppend(
        &line, " cluster_compile_ms=",
        absl::StrJoin(o.first.compiles, ",", [](std::string* out, const ClusterCompile& c) {
          absl::StrAppend(out, c.cluster, ":", absl::StrFormat("%.1f", c.compile_ms),
                          c.from_disk_cache ? ":disk" : "");
        }));
  }
  return line;
}

// One line per cluster compiled by a run: its compile time and where it went; a symbolic
// executable (one for every batch size >= 2) says so.
void PrintCompiles(const RunStats& stats) {
  for (const ClusterCompile& c : stats.compiles) {
    std::printf(
        "compiled %s (%d nodes) in %.1f ms: lowering %.1f ms, HLO passes %.1f ms, "
        "%s %.1f ms, %d kernels%s\n",
        c.cluster.c_str(), c.nodes, c.compile_ms, c.lowering_ms, c.passes_ms,
        c.from_disk_cache ? "loaded from the disk cache in" : "codegen", c.codegen_ms, c.kernels,
        c.shape_class == "static" ? "" : absl::StrCat(", ", c.shape_class).c_str());
  }
}

// Row `row` of `t` along its first dim (a copy), for --batches.
absl::StatusOr<Tensor> Row(const Tensor& t, int64_t row, const std::string& name) {
  if (t.rank() < 1 || t.dim(0) < 1 || DTypeSize(t.dtype()) == 0) {
    return InvalidArgument(
        "--batches %s: the file must hold a numeric tensor whose first dim "
        "indexes the steps' batches, got %s",
        name, t.ShapeString());
  }
  std::vector<int64_t> dims(t.dims().begin() + 1, t.dims().end());
  Tensor out(t.dtype(), dims);
  const size_t bytes = out.byte_size();
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + bytes * row, bytes);
  return out;
}

// tfjit train: N steps of the train signature (or --target ops) in one session.
int TrainCommand(const Args& args) {
  if (args.steps < 1) return UsageError("train needs --steps N");
  if (args.targets.empty() && args.options.signature.empty() && args.fetches.empty()) {
    return UsageError(
        "train needs the step to run: --signature train (a SavedModel's train "
        "signature) or --target OP (a TF1 graph's train op)");
  }
  SessionOptions options = args.options;
  // --profile reports the last step's peak tensor memory, which the session measures only
  // under a cap: without --memory-limit, one no run reaches.
  if (args.profile && options.memory_limit_bytes == 0) {
    options.memory_limit_bytes = std::numeric_limits<int64_t>::max() / 4;
  }
  auto session = Session::Load(args.model, options);
  if (!session.ok()) return Fail(session.status());
  auto fixed = MakeFeeds(args, **session);
  if (!fixed.ok()) return Fail(fixed.status());
  std::vector<std::pair<std::string, Tensor>> per_step;
  for (const auto& [name, file] : args.batches) {
    absl::StatusOr<Tensor> t = runtime::ReadNpy(file);
    if (!t.ok()) return Fail(t.status());
    per_step.push_back({name, *t});
  }
  std::vector<std::string> fetches = args.fetches;
  if (fetches.empty() && args.targets.empty()) fetches = (*session)->DefaultFetches();
  if (!args.inits.empty()) {
    absl::Status s = (*session)->Run(*fixed, {}, args.inits).status();
    if (!s.ok()) return Fail(s);
  }
  const int64_t every = args.every > 0 ? args.every : std::max<int64_t>(1, args.steps / 10);
  int64_t examples_per_step = 0;  // the first fed tensor's first dim
  const auto start = std::chrono::steady_clock::now();
  auto last_line = start;
  int64_t last_step = 0;
  RunStats first, last;
  for (int64_t step = 1; step <= args.steps; ++step) {
    std::vector<std::pair<std::string, Tensor>> feeds = *fixed;
    for (const auto& [name, all] : per_step) {
      absl::StatusOr<Tensor> row = Row(all, (step - 1) % std::max<int64_t>(1, all.dim(0)), name);
      if (!row.ok()) return Fail(row.status());
      feeds.push_back({name, *row});
    }
    if (examples_per_step == 0 && !feeds.empty() && feeds[0].second.rank() > 0) {
      examples_per_step = feeds[0].second.dim(0);
    }
    RunStats stats;
    RunOptions run_options;
    run_options.profile = args.profile && step == args.steps;
    auto out = (*session)->Run(run_options, feeds, fetches, args.targets, &stats);
    if (!out.ok()) {
      return Fail(AppendContext(out.status(), absl::StrCat("at training step ", step)));
    }
    if (step == 1) first = stats;
    if (step == args.steps) last = std::move(stats);
    if (step % every != 0 && step != args.steps) continue;
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_line).count();
    const double rate = seconds > 0 ? (step - last_step) / seconds : 0;
    std::string values;
    for (size_t i = 0; i < fetches.size(); ++i) {
      const Tensor& t = (*out)[i];
      if (t.num_elements() != 1 ||
          !(t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat64)) {
        continue;
      }
      const double v = t.dtype() == DType::kFloat32 ? t.data<float>()[0] : t.data<double>()[0];
      absl::StrAppend(&values, "  ", fetches[i], " ", absl::StrFormat("%.6g", v));
    }
    std::printf("step %lld/%lld%s  %.1f steps/s  %.0f examples/s\n", static_cast<long long>(step),
                static_cast<long long>(args.steps), values.c_str(), rate,
                rate * static_cast<double>(examples_per_step));
    std::fflush(stdout);
    last_line = now;
    last_step = step;
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "trained %lld steps in %.2f s (%.1f steps/s); jit=%s clusters=%d "
      "nodes_compiled=%d/%d compile_ms=%.1f (first step)\n",
      static_cast<long long>(args.steps), total, args.steps / std::max(total, 1e-9),
      JitModeName(args.options.jit), first.clusters, first.nodes_compiled, first.nodes_total,
      first.compile_ms);
  if (args.profile) {
    PrintProfile(last);
    std::printf(
        "last step: %lld bytes copied by compiled clusters (variables updated by the "
        "kernels that compute them), peak tensor memory %.3f MB\n",
        static_cast<long long>(last.bytes_copied), last.peak_memory_bytes / 1e6);
  }
  if (!args.save.empty()) {
    absl::Status s = (*session)->SaveVariables(args.save);
    if (!s.ok()) return Fail(s);
    std::printf("saved the variables to %s.index and %s.data-00000-of-00001\n", args.save.c_str(),
                args.save.c_str());
  }
  return 0;
}

int RunCommand(const Args& args) {
  auto session = Session::Load(args.model, args.options);
  if (!session.ok()) return Fail(session.status());
  std::vector<std::string> fetches = args.fetches;
  if (fetches.empty() && args.targets.empty()) fetches = (*session)->DefaultFetches();
  auto feeds = MakeFeeds(args, **session);
  if (!feeds.ok()) return Fail(feeds.status());
  auto outcome = RunRepeated(**session, args, *feeds, fetches);
  if (!outcome.ok()) return Fail(outcome.status());
  for (size_t i = 0; i < fetches.size(); ++i) {
    std::printf("%s\n", DescribeTensor(fetches[i], outcome->outputs[i]).c_str());
  }
  if (!args.output_dir.empty()) {
    absl::Status s = WriteOutputs(args.output_dir, fetches, outcome->outputs);
    if (!s.ok()) return Fail(s);
  }
  std::printf("%s\n", SummaryLine(*outcome, args.options.jit).c_str());
  if (args.profile) PrintProfile(outcome->profiled);
  return 0;
}

// The clusters and why nodes stay out of them; with inputs (--input, --random-inputs,
// --shape), also one run that compiles them, and each cluster's compile time.
// Writes `text` to `path` ("" = standard output).
absl::Status WriteText(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return absl::OkStatus();
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return tfjit::NotFound("cannot open '%s' for writing", path);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok ? absl::OkStatus()
                                   : tfjit::Internal("writing '%s' failed", path);
}

// The DOT text drawn as SVG by Graphviz's dot, into `path` ("" = standard output).
absl::Status WriteSvg(const std::string& dot, const std::string& path) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    return tfjit::FailedPrecondition(
        "explain --format svg needs Graphviz's dot, which is not "
        "installed (Debian: apt-get install graphviz); "
        "--format dot writes the graph for another renderer");
  }
  char dot_path[] = "/tmp/tfjit-explain-XXXXXX";
  const int fd = mkstemp(dot_path);
  if (fd < 0) return tfjit::Internal("cannot create a temporary file for dot");
  close(fd);
  TFJIT_RETURN_IF_ERROR(WriteText(dot_path, dot));
  const std::string command = absl::StrCat("dot -Tsvg '", dot_path, "'",
                                           path.empty() ? "" : absl::StrCat(" -o '", path, "'"));
  const int rc = std::system(command.c_str());
  std::remove(dot_path);
  if (rc != 0) return tfjit::Internal("Graphviz's dot failed (%s)", command);
  return absl::OkStatus();
}

// explain --batch-sizes: random inputs at each batch size in turn (dim 0 of every input whose
// dim 0 is -1), then each compiled cluster's compiles and its executables by shape class.
int ExplainBatchSizes(Args args, Session& session, const std::vector<std::string>& fetches) {
  if (!args.random_seed.has_value()) args.random_seed = 1;
  std::map<std::string, int> compiles;
  RunStats last;
  for (size_t n = 0; n < args.batch_sizes.size(); ++n) {
    const int64_t batch = args.batch_sizes[n];
    Args at = args;
    for (const InputInfo& in : session.Inputs()) {
      if (in.unknown_rank || in.dims.empty() || in.dims[0] >= 0) continue;
      std::vector<int64_t> dims = in.dims;
      dims[0] = batch;
      for (int64_t& d : dims) d = d < 0 ? args.unknown_dim : d;
      at.shapes.push_back({in.name, dims});
    }
    auto feeds = MakeFeeds(at, session);
    if (!feeds.ok()) return Fail(feeds.status());
    RunOptions options;
    options.profile = n + 1 == args.batch_sizes.size();
    RunStats stats;
    auto out = session.Run(options, *feeds, fetches, {}, &stats);
    if (!out.ok()) {
      return Fail(AppendContext(out.status(), absl::StrCat("at batch size ", batch)));
    }
    for (const ClusterCompile& c : stats.compiles) ++compiles[c.cluster];
    if (options.profile) last = std::move(stats);
  }
  std::printf("batch sizes %s:\n", absl::StrJoin(args.batch_sizes, ", ").c_str());
  for (const UnitProfile& p : last.profile) {
    if (!p.compiled) continue;
    std::printf("  %s: %d compile%s; executables: %s\n", p.name.c_str(), compiles[p.name],
                compiles[p.name] == 1 ? "" : "s", p.shapes.c_str());
  }
  return 0;
}

int ExplainCommand(Args args) {
  auto session = Session::Load(args.model, args.options);
  if (!session.ok()) return Fail(session.status());
  std::vector<std::string> fetches = args.fetches;
  if (fetches.empty() && args.targets.empty()) fetches = (*session)->DefaultFetches();
  // Targets (a training step's "train" op) are planned with the fetches, as Run plans them.
  std::vector<std::string> planned = fetches;
  for (const std::string& t : args.targets) planned.push_back("^" + t);
  if (args.format != "text") {
    auto dot = (*session)->ExplainDot(planned);
    if (!dot.ok()) return Fail(dot.status());
    absl::Status written =
        args.format == "dot" ? WriteText(args.output, *dot) : WriteSvg(*dot, args.output);
    return written.ok() ? 0 : Fail(written);
  }
  auto report = (*session)->Explain(planned);
  if (!report.ok()) return Fail(report.status());
  absl::Status written = WriteText(args.output, *report);
  if (!written.ok()) return Fail(written);
  if (!args.batch_sizes.empty()) return ExplainBatchSizes(args, **session, fetches);
  if (args.inputs.empty() && !args.random_seed.has_value() && args.shapes.empty()) return 0;
  auto feeds = MakeFeeds(args, **session);
  if (!feeds.ok()) return Fail(feeds.status());
  args.repeat = 1;
  auto outcome = RunRepeated(**session, args, *feeds, fetches);
  if (!outcome.ok()) return Fail(outcome.status());
  PrintCompiles(outcome->first);
  return 0;
}

// Latency of one model with --jit off and --jit auto in the same process: the first run
// (compilation included), 2 warm-up runs, then the median and minimum of --repeat runs.
int BenchCommand(Args args) {
  if (!args.random_seed.has_value()) args.random_seed = 1;
  if (args.repeat == 1) args.repeat = 20;
  constexpr int kWarmup = 2;
  const int threads = args.options.intra_op_threads > 0
                          ? args.options.intra_op_threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::printf(
      "tfjit bench: %s, %d thread%s, median of %d runs after %d warm-up runs, "
      "inputs: %s\n",
      args.model.c_str(), threads, threads == 1 ? "" : "s", args.repeat, kWarmup,
      args.inputs.empty() ? absl::StrCat("random, seed ", *args.random_seed).c_str()
                          : "from --input, others random");
  const JitMode modes[2] = {JitMode::kOff, JitMode::kAuto};
  Outcome outcomes[2];
  double min_ms[2] = {0, 0};
  for (int m = 0; m < 2; ++m) {
    args.options.jit = modes[m];
    auto session = Session::Load(args.model, args.options);
    if (!session.ok()) return Fail(session.status());
    std::vector<std::string> fetches = args.fetches;
    if (fetches.empty()) fetches = (*session)->DefaultFetches();
    auto feeds = MakeFeeds(args, **session);
    if (!feeds.ok()) return Fail(feeds.status());
    Args warm = args;
    warm.repeat = 1 + kWarmup;
    auto first = RunRepeated(**session, warm, *feeds, fetches);
    if (!first.ok()) return Fail(first.status());
    auto outcome = RunRepeated(**session, args, *feeds, fetches);
    if (!outcome.ok()) return Fail(outcome.status());
    outcome->first = first->first;
    min_ms[m] = outcome->min_run_ms;
    outcomes[m] = std::move(*outcome);
  }
  const Outcome& off = outcomes[0];
  const Outcome& on = outcomes[1];
  std::printf("jit=off   median %9.3f ms  min %9.3f ms  first run %9.1f ms\n", off.median_run_ms,
              min_ms[0], off.first.run_ms);
  std::printf(
      "jit=auto  median %9.3f ms  min %9.3f ms  first run %9.1f ms  compile %.1f ms%s  "
      "clusters %d  nodes compiled %d/%d\n",
      on.median_run_ms, min_ms[1], on.first.run_ms, on.first.compile_ms,
      on.first.disk_cache_hits > 0
          ? absl::StrFormat(" (%d from the disk cache)", on.first.disk_cache_hits).c_str()
          : "",
      on.first.clusters, on.first.nodes_compiled, on.first.nodes_total);
  PrintCompiles(on.first);
  double max_abs = 0, max_ref = 0;
  for (size_t i = 0; i < off.outputs.size(); ++i) {
    const Tensor& a = off.outputs[i];
    const Tensor& b = on.outputs[i];
    if (!IsFloatingDType(a.dtype()) || a.dims() != b.dims()) continue;
    for (int64_t k = 0; k < a.num_elements(); ++k) {
      const double x = ElementAsDouble(a, k), y = ElementAsDouble(b, k);
      if (std::isfinite(x) && std::isfinite(y)) {
        max_abs = std::max(max_abs, std::abs(x - y));
        max_ref = std::max(max_ref, std::abs(x));
      }
    }
  }
  std::printf("auto vs off: %.2fx  (float outputs: max |auto - off| / max |off| = %.2g)\n",
              off.median_run_ms / std::max(on.median_run_ms, 1e-9),
              max_ref > 0 ? max_abs / max_ref : max_abs);
  if (on.flops > 0) {
    std::printf(
        "compiled convolutions and dots: %.4f GFLOP per run, %.1f GFLOP/s at the "
        "auto median\n",
        static_cast<double>(on.flops) * 1e-9,
        static_cast<double>(on.flops) * 1e-6 / std::max(on.median_run_ms, 1e-9));
  }
  return 0;
}

// The main job: the bundled demo model, uncompiled and auto-clustered, same inputs.
int DemoCommand(Args args) {
  args.model = args.model + "/demo_mlp.pbtxt";
  args.random_seed = 1;
  args.repeat = 50;
  args.unknown_dim = 64;  // a batch of 64 rows
  Outcome outcomes[2];
  const JitMode modes[2] = {JitMode::kNone, JitMode::kAuto};
  std::printf("tfjit demo: %s (batch 64, random inputs, seed 1, median of %d runs)\n",
              args.model.c_str(), args.repeat);
  for (int m = 0; m < 2; ++m) {
    args.options.jit = modes[m];
    auto session = Session::Load(args.model, args.options);
    if (!session.ok()) return Fail(session.status());
    std::vector<std::string> fetches = (*session)->DefaultFetches();
    auto feeds = MakeFeeds(args, **session);
    if (!feeds.ok()) return Fail(feeds.status());
    auto outcome = RunRepeated(**session, args, *feeds, fetches);
    if (!outcome.ok()) return Fail(outcome.status());
    if (m == 1) {
      for (size_t i = 0; i < fetches.size(); ++i) {
        std::printf("%s\n", DescribeTensor(fetches[i], outcome->outputs[i]).c_str());
      }
    }
    outcomes[m] = std::move(*outcome);
    std::printf("%s\n", SummaryLine(outcomes[m], modes[m]).c_str());
  }
  double max_diff = 0;
  for (size_t i = 0; i < outcomes[0].outputs.size(); ++i) {
    const Tensor& a = outcomes[0].outputs[i];
    const Tensor& b = outcomes[1].outputs[i];
    for (int64_t k = 0; k < a.num_elements(); ++k) {
      max_diff = std::max(max_diff, std::abs(ElementAsDouble(a, k) - ElementAsDouble(b, k)));
    }
  }
  std::printf("uncompiled %.4f ms vs compiled %.4f ms per run (%.2fx); max |difference| %.3g\n",
              outcomes[0].median_run_ms, outcomes[1].median_run_ms,
              outcomes[0].median_run_ms / std::max(outcomes[1].median_run_ms, 1e-9), max_diff);
  return 0;
}

std::string Yes(bool b) { return b ? "yes" : "-"; }

// The catalog's constraints, then (for the attrs it leaves open) TF's registry's lists.
std::string DTypesText(const OpSupport& op) {
  std::vector<std::string> parts;
  const size_t attrs = op.dtypes.size() + op.registry_dtypes.size();
  for (const auto* list : {&op.dtypes, &op.registry_dtypes}) {
    for (const auto& [attr, types] : *list) {
      parts.push_back(
          absl::StrCat(attrs > 1 ? absl::StrCat(attr, "=") : "", absl::StrJoin(types, ",")));
    }
  }
  return parts.empty() ? "(not constrained)" : absl::StrJoin(parts, " ");
}

// tfjit ops: one line per op; tfjit ops OP: one op in detail.
int OpsCommand(int argc, char** argv) {
  if (argc > 3) return UsageError("ops takes at most one op name");
  if (argc == 3 && argv[2][0] == '-') return UsageError(absl::StrCat("unknown flag: ", argv[2]));
  if (argc == 3) {
    StatusOr<OpSupport> op = DescribeOp(argv[2]);
    if (!op.ok()) return Fail(op.status());
    std::printf("%s (family %s%s)\n", op->name.c_str(), op->family.c_str(),
                op->stateful ? ", stateful" : "");
    std::printf("  inputs:   %s\n",
                op->inputs.empty() ? "(none)" : absl::StrJoin(op->inputs, ", ").c_str());
    std::printf("  outputs:  %s\n",
                op->outputs.empty() ? "(none)" : absl::StrJoin(op->outputs, ", ").c_str());
    for (const auto& [attr, types] : op->dtypes) {
      std::printf("  dtypes:   %s in {%s}\n", attr.c_str(), absl::StrJoin(types, ", ").c_str());
    }
    for (const auto& [attr, types] : op->registry_dtypes) {
      std::printf("  dtypes:   %s in {%s} (TF's registry)\n", attr.c_str(),
                  absl::StrJoin(types, ", ").c_str());
    }
    if (op->dtypes.empty() && op->registry_dtypes.empty()) {
      std::printf("  dtypes:   not constrained by the catalog\n");
    }
    for (const auto& [name, value] : op->attr_defaults) {
      std::printf("  attr:     %s = %s (default)\n", name.c_str(), value.c_str());
    }
    std::printf("  kernel:   %s\n", op->kernel ? "yes (runs uncompiled: --jit none/off, and "
                                                 "outside clusters)"
                                               : "no");
    std::printf("  compiles: %s\n",
                op->cpu
                    ? absl::StrCat(
                          "yes, CPU and GPU",
                          op->compile_note.empty() ? "" : absl::StrCat(" (", op->compile_note, ")"))
                          .c_str()
                    : "no (with --jit auto it runs on its kernel; --jit all fails)");
    std::printf(
        "  compile-time constant inputs: %s\n",
        op->constant_inputs.empty() ? "none" : absl::StrJoin(op->constant_inputs, ", ").c_str());
    if (!op->host_memory.empty()) {
      std::printf("  host memory on GPU: %s\n", absl::StrJoin(op->host_memory, ", ").c_str());
    }
    return 0;
  }
  const std::vector<OpSupport> ops = ListOps();
  int kernels = 0, compiled = 0;
  std::printf("%-44s %-16s %-6s %-4s %-4s %s\n", "op", "family", "kernel", "cpu", "gpu", "dtypes");
  for (const OpSupport& op : ops) {
    kernels += op.kernel;
    compiled += op.cpu;
    std::printf("%-44s %-16s %-6s %-4s %-4s %s\n", op.name.c_str(), op.family.c_str(),
                Yes(op.kernel).c_str(), Yes(op.cpu).c_str(), Yes(op.gpu).c_str(),
                DTypesText(op).c_str());
  }
  std::printf(
      "%zu ops: %d with a fallback kernel, %d compile (CPU and GPU); "
      "'tfjit ops OP' shows one\n",
      ops.size(), kernels, compiled);
  return 0;
}

}  // namespace
}  // namespace tfjit::cli

int main(int argc, char** argv) {
  using namespace tfjit::cli;
  // --help anywhere prints the usage; a flag where the model belongs is a usage error.
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
  }
  if (argc >= 2 && std::string(argv[1]) == "--version") {
    std::printf("tfjit %s (LLVM %s)\n", TFJIT_VERSION_STRING, TFJIT_LLVM_VERSION_STRING);
    return 0;
  }
  if (argc >= 2 && std::string(argv[1]) == "ops") return OpsCommand(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "serve") {
    return tfjit::serving::ServeMain(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (argc >= 3 && argv[2][0] == '-') {
    return UsageError(
        absl::StrCat("expected a model path after '", argv[1], "', got the flag '", argv[2], "'"));
  }
  Args args;
  // TF's TF_XLA_FLAGS and XLA_FLAGS first; the command line's flags override them.
  tfjit::StatusOr<tfjit::SessionOptions> from_env = tfjit::SessionOptionsFromEnvironment();
  if (!from_env.ok()) return Fail(from_env.status());
  args.options = *from_env;
  args.options.show_compile_progress = isatty(STDERR_FILENO) != 0;
  const std::string error = ParseArgs(argc, argv, &args);
  if (!error.empty()) return UsageError(error);
  if (args.command == "run") return RunCommand(args);
  if (args.command == "train") return TrainCommand(args);
  if (args.command == "explain") return ExplainCommand(args);
  if (args.command == "demo") return DemoCommand(args);
  if (args.command == "bench") return BenchCommand(args);
  return UsageError(absl::StrCat("unknown command: ", args.command));
}
