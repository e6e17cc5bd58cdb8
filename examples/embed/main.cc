// embed: loads a TF model with tfjit's public API, feeds every input a tensor filled with one
// value (1 unless given as NAME=VALUE), runs it compiled (--jit auto) and prints each fetched
// tensor's shape and first values. Built against the installed package (examples/embed/
// CMakeLists.txt), it is what a C++ user's program looks like.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tfjit/session.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [INPUT=VALUE]...\n", argv[0]);
    return 2;
  }
  std::map<std::string, float> values;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "expected INPUT=VALUE, got '%s'\n", argv[i]);
      return 2;
    }
    values[arg.substr(0, eq)] = std::strtof(arg.c_str() + eq + 1, nullptr);
  }
  tfjit::SessionOptions options;
  options.jit = tfjit::JitMode::kAuto;
  tfjit::StatusOr<std::unique_ptr<tfjit::Session>> session = tfjit::Session::Load(argv[1], options);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 1;
  }
  std::vector<std::pair<std::string, tfjit::Tensor>> feeds;
  for (const tfjit::InputInfo& in : (*session)->Inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    tfjit::Tensor t(in.dtype, dims);
    if (in.dtype != tfjit::DType::kFloat32) {
      std::fprintf(stderr, "input '%s' is not float32; this example feeds floats\n",
                   in.name.c_str());
      return 1;
    }
    const auto it = values.find(in.name);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      t.data<float>()[i] = it == values.end() ? 1.0f : it->second;
    }
    feeds.emplace_back(in.name, std::move(t));
  }
  const std::vector<std::string> fetches = (*session)->DefaultFetches();
  tfjit::RunStats stats;
  tfjit::StatusOr<std::vector<tfjit::Tensor>> out = (*session)->Run(feeds, fetches, &stats);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
    return 1;
  }
  for (size_t k = 0; k < out->size(); ++k) {
    const tfjit::Tensor& t = (*out)[k];
    std::printf("%s %s", fetches[k].c_str(), t.ShapeString().c_str());
    if (t.dtype() == tfjit::DType::kFloat32) {
      for (int64_t i = 0; i < t.num_elements() && i < 4; ++i)
        std::printf(" %.6g", t.data<float>()[i]);
    }
    std::printf("\n");
  }
  std::printf("compiled clusters: %d, nodes compiled: %d of %d\n", stats.clusters,
              stats.nodes_compiled, stats.nodes_total);
  return 0;
}
