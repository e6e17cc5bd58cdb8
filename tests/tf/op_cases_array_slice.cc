// Op cases of the array family: slicing, shapes, gather/pad/tile, and the shape queries and
// identities of MiscCases.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "core/dtype.h"
#include "core/status.h"
#include "examples/cli_output.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {

std::vector<OpCase> SliceCases() {
  std::vector<OpCase> cases;
  auto slice = [&](const std::string& name, Dims in, std::vector<int32_t> begin,
                   std::vector<int32_t> size) {
    OpCase c{name, "Slice", DType::kFloat32, {in}, {Ints(begin), Ints(size)}};
    c.attrs["Index"] = TypeAttr(DType::kInt32);
    c.reference = [](const std::vector<Tensor>& x) {
      Dims od;
      for (int64_t d = 0; d < x[0].rank(); ++d) {
        const int64_t b = ElementAsInt64(x[1], d), n = ElementAsInt64(x[2], d);
        od.push_back(n == -1 ? x[0].dim(static_cast<int>(d)) - b : n);
      }
      return Build(x[0].dtype(), od, [&](const Dims& o) {
        Dims i = o;
        for (size_t d = 0; d < i.size(); ++d) i[d] += ElementAsInt64(x[1], d);
        return At(x[0], i);
      });
    };
    cases.push_back(c);
  };
  slice("Slice_2d", {4, 6}, {1, 2}, {2, 3});
  slice("Slice_minus1", {4, 6}, {1, 0}, {-1, -1});
  slice("Slice_empty", {4, 6}, {4, 2}, {0, 2});
  slice("Slice_3d", {3, 5, 7}, {0, 1, 2}, {3, 1, 5});
  struct SS {
    std::string name;
    Dims in;
    std::vector<int64_t> b, e, s;
    int bm = 0, em = 0, ell = 0, na = 0, sh = 0;
  };
  const std::vector<SS> ss = {
      {"basic", {10}, {2}, {8}, {2}},
      {"negative_stride", {10}, {8}, {1}, {-3}},
      {"reverse_all", {4, 5}, {0, 0}, {0, 0}, {-1, -1}, 3, 3},
      {"negative_indices", {10}, {-4}, {-1}, {1}},
      {"clamped", {6}, {-100}, {100}, {1}},
      {"empty", {6}, {4}, {2}, {1}},
      {"begin_end_mask", {5, 6}, {3, 1}, {1, 5}, {1, 2}, 1, 1},
      {"shrink", {4, 5}, {1, 0}, {2, 5}, {1, 1}, 0, 0, 0, 0, 1},
      {"shrink_negative", {4, 5}, {0, -1}, {0, 0}, {1, 1}, 1, 1, 0, 0, 2},
      {"new_axis", {4, 5}, {0, 0, 1}, {0, 0, 4}, {1, 1, 1}, 1, 1, 0, 2},
      {"ellipsis", {2, 3, 4, 5}, {0, 1}, {0, 3}, {1, 1}, 0, 0, 1},
      {"ellipsis_middle", {2, 3, 4, 5}, {1, 0, 4}, {2, 0, 0}, {1, 1, -2}, 0, 0, 2, 0, 1},
      {"ellipsis_new_axis", {2, 3, 4}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 4, 4, 1, 2},
      {"implicit_tail", {3, 4, 5}, {1}, {3}, {1}},
      {"stride_past_end", {7, 3}, {1}, {100}, {3}},
      {"neg_stride_masked_begin", {7}, {0}, {2}, {-2}, 1},
  };
  for (const SS& s : ss) {
    for (DType t : {DType::kFloat32, DType::kInt64}) {
      OpCase c{absl::StrCat("StridedSlice_", s.name, "_", DTypeName(t)),
               "StridedSlice",
               t,
               {s.in},
               {Ints64(s.b), Ints64(s.e), Ints64(s.s)}};
      c.attrs["Index"] = TypeAttr(DType::kInt64);
      c.attrs["begin_mask"] = IntAttr(s.bm);
      c.attrs["end_mask"] = IntAttr(s.em);
      c.attrs["ellipsis_mask"] = IntAttr(s.ell);
      c.attrs["new_axis_mask"] = IntAttr(s.na);
      c.attrs["shrink_axis_mask"] = IntAttr(s.sh);
      c.reference = StridedSliceRef(s.b, s.e, s.s, s.bm, s.em, s.ell, s.na, s.sh);
      cases.push_back(c);
    }
  }
  // TensorStridedSliceUpdate over the same specs: the input with the slice replaced by a value
  // (a Const input here) of the slice's shape; value elements count down from -1 so that every
  // written position differs from the input.
  for (const SS& s : ss) {
    for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
      const StridedPicks picks =
          PickStridedSlice(s.in, s.b, s.e, s.s, s.bm, s.em, s.ell, s.na, s.sh);
      const Tensor value = Build(t, picks.dims, [&](const Dims& o) {
        return -1.0 - static_cast<double>(Ravel(o, picks.dims) % 50);
      });
      OpCase c{absl::StrCat("TensorStridedSliceUpdate_", s.name, "_", DTypeHloName(t)),
               "TensorStridedSliceUpdate",
               t,
               {s.in},
               {Ints64(s.b), Ints64(s.e), Ints64(s.s), value}};
      c.attrs["Index"] = TypeAttr(DType::kInt64);
      c.attrs["begin_mask"] = IntAttr(s.bm);
      c.attrs["end_mask"] = IntAttr(s.em);
      c.attrs["ellipsis_mask"] = IntAttr(s.ell);
      c.attrs["new_axis_mask"] = IntAttr(s.na);
      c.attrs["shrink_axis_mask"] = IntAttr(s.sh);
      c.reference = [s](const std::vector<Tensor>& in) {
        const StridedPicks p =
            PickStridedSlice(in[0].dims(), s.b, s.e, s.s, s.bm, s.em, s.ell, s.na, s.sh);
        Tensor out =
            Build(in[0].dtype(), in[0].dims(), [&](const Dims& i) { return At(in[0], i); });
        for (int64_t k = 0; k < in[4].num_elements(); ++k) {
          const Dims o = Unravel(k, p.dims);
          SetFromDouble(out, Ravel(p.source(o), in[0].dims()), At(in[4], o));
        }
        return out;
      };
      cases.push_back(c);
    }
  }
  return cases;
}

// Reference of ops whose output element is an input element (or a fill value): `src` maps
// an output index to an input index of in[0], or returns false for `fill`.
RefFn IndexRef(std::function<Dims(const std::vector<Tensor>&)> out_dims,
               std::function<bool(const std::vector<Tensor>&, const Dims&, Dims*)> src,
               double fill = 0) {
  return [=](const std::vector<Tensor>& in) {
    return Build(in[0].dtype(), out_dims(in), [&](const Dims& o) {
      Dims i;
      return src(in, o, &i) ? At(in[0], i) : fill;
    });
  };
}

std::vector<OpCase> ShapeOpCases() {
  std::vector<OpCase> cases;
  // Split (split_dim first), SplitV, Unpack: every output checked.
  for (auto [dims, axis, n] : std::vector<std::tuple<Dims, int32_t, int>>{
           {{6, 4}, 0, 3}, {{6, 4}, -1, 2}, {{2, 0, 3}, 2, 3}, {{5}, 0, 1}}) {
    for (int k = 0; k < n; ++k) {
      OpCase c{absl::StrCat("Split_", DimsName(dims), "_axis", axis < 0 ? "_neg" : "",
                            std::abs(axis), "_n", n, "_out", k),
               "Split",
               DType::kFloat32,
               {dims},
               {Ints({axis}, true)}};
      c.consts_first = true;
      c.attrs["num_split"] = IntAttr(n);
      c.output = k;
      c.reference = IndexRef(
          [=](const std::vector<Tensor>& in) {
            Dims d = in[0].dims();
            const size_t a = static_cast<size_t>(axis < 0 ? axis + d.size() : axis);
            d[a] /= n;
            return d;
          },
          [=](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
            *i = o;
            const size_t a = static_cast<size_t>(axis < 0 ? axis + o.size() : axis);
            (*i)[a] += k * (in[0].dim(static_cast<int>(a)) / n);
            return true;
          });
      cases.push_back(c);
    }
  }
  for (auto [sizes, axis] : std::vector<std::pair<std::vector<int64_t>, int32_t>>{
           {{1, 2, 3}, 1}, {{4, -1}, 1}, {{0, 6}, -1}}) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      OpCase c{absl::StrCat("SplitV_", absl::StrJoin(sizes, "_"), "_out", k),
               "SplitV",
               DType::kInt32,
               {{2, 6}},
               {Ints64(sizes), Ints({axis}, true)}};
      c.attrs["num_split"] = IntAttr(static_cast<int64_t>(sizes.size()));
      c.attrs["Tlen"] = TypeAttr(DType::kInt64);
      c.output = static_cast<int>(k);
      std::vector<int64_t> full = sizes;
      int64_t known = 0;
      for (int64_t v : full) known += v == -1 ? 0 : v;
      for (int64_t& v : full) v = v == -1 ? 6 - known : v;
      int64_t start = 0;
      for (size_t j = 0; j < k; ++j) start += full[j];
      const int64_t len = full[k];
      c.reference = IndexRef([=](const std::vector<Tensor>&) { return Dims{2, len}; },
                             [=](const std::vector<Tensor>&, const Dims& o, Dims* i) {
                               *i = {o[0], o[1] + start};
                               return true;
                             });
      cases.push_back(c);
    }
  }
  for (auto [dims, axis] :
       std::vector<std::pair<Dims, int>>{{{3, 4}, 0}, {{3, 4}, 1}, {{2, 3, 2}, -1}}) {
    const int n = static_cast<int>(dims[static_cast<size_t>(axis < 0 ? axis + 3 : axis)]);
    for (int k = 0; k < n; ++k) {
      OpCase c{absl::StrCat("Unpack_", DimsName(dims), "_axis", axis < 0 ? "_neg" : "",
                            std::abs(axis), "_out", k),
               "Unpack",
               DType::kFloat32,
               {dims}};
      c.attrs["num"] = IntAttr(n);
      c.attrs["axis"] = IntAttr(axis);
      c.output = k;
      const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(dims.size()) : axis);
      c.reference = IndexRef(
          [=](const std::vector<Tensor>& in) {
            Dims d = in[0].dims();
            d.erase(d.begin() + a);
            return d;
          },
          [=](const std::vector<Tensor>&, const Dims& o, Dims* i) {
            *i = o;
            i->insert(i->begin() + a, k);
            return true;
          });
      cases.push_back(c);
    }
  }
  return cases;
}

std::vector<OpCase> MoreArrayCases() {
  std::vector<OpCase> cases;
  // GatherV2 / Gather with constant indices (the compiled form; see array_slice_lowerings.cc).
  struct G {
    Dims params;
    Dims idx_dims;
    std::vector<int32_t> idx;
    int32_t axis;
  };
  for (const G& g : std::vector<G>{{{5, 3}, {4}, {4, 0, 0, 2}, 0},
                                   {{5, 3}, {2, 2}, {2, 1, 0, 2}, 1},
                                   {{2, 3, 4}, {}, {3}, -1},
                                   {{4, 2}, {0}, {}, 0},
                                   {{3, 4, 2}, {2, 3}, {1, 0, 2, 2, 1, 0}, 1}}) {
    OpCase c{absl::StrCat("GatherV2_", DimsName(g.params), "_", DimsName(g.idx_dims), "_axis",
                          g.axis < 0 ? "_neg" : "", std::abs(g.axis)),
             "GatherV2",
             DType::kFloat32,
             {g.params},
             {Tensor::FromVector<int32_t>(DType::kInt32, g.idx_dims, g.idx), Ints({g.axis}, true)}};
    c.has_t = false;
    c.attrs["Tparams"] = TypeAttr(DType::kFloat32);
    c.attrs["Tindices"] = TypeAttr(DType::kInt32);
    c.attrs["Taxis"] = TypeAttr(DType::kInt32);
    const size_t q = g.idx_dims.size();
    auto axis_of = [](const std::vector<Tensor>& in) {
      int64_t a = ElementAsInt64(in[2], 0);
      return static_cast<size_t>(a < 0 ? a + in[0].rank() : a);
    };
    c.reference = IndexRef(
        [=](const std::vector<Tensor>& in) {
          const size_t a = axis_of(in);
          Dims d(in[0].dims().begin(), in[0].dims().begin() + a);
          d.insert(d.end(), in[1].dims().begin(), in[1].dims().end());
          d.insert(d.end(), in[0].dims().begin() + a + 1, in[0].dims().end());
          return d;
        },
        [=](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
          const size_t a = axis_of(in);
          Dims ii(o.begin() + a, o.begin() + a + q);
          *i = Dims(o.begin(), o.begin() + a);
          i->push_back(static_cast<int64_t>(At(in[1], ii)));
          i->insert(i->end(), o.begin() + a + q, o.end());
          return true;
        });
    cases.push_back(c);
  }
  // OneHot: out-of-range and negative indices give a row of off_value.
  for (int axis : {-1, 0, 1}) {
    OpCase c{
        absl::StrCat("OneHot_axis", axis < 0 ? "_neg1" : std::to_string(axis)),
        "OneHot",
        DType::kFloat32,
        {{2, 3}},
        {Ints({4}, true), Floats(DType::kFloat32, {}, {5.0}), Floats(DType::kFloat32, {}, {-1.0})}};
    c.input_dtypes = {DType::kInt32};
    c.feed_values = {Tensor::FromVector<int32_t>(DType::kInt32, {2, 3}, {0, 3, -1, 4, 2, 1})};
    c.attrs["TI"] = TypeAttr(DType::kInt32);
    c.attrs["axis"] = IntAttr(axis);
    c.reference = [axis](const std::vector<Tensor>& in) {
      const size_t a = static_cast<size_t>(axis < 0 ? 2 : axis);
      Dims d = in[0].dims();
      d.insert(d.begin() + a, 4);
      return Build(DType::kFloat32, d, [&](const Dims& o) {
        Dims i = o;
        const int64_t j = o[a];
        i.erase(i.begin() + a);
        return At(in[0], i) == static_cast<double>(j) ? 5.0 : -1.0;
      });
    };
    cases.push_back(c);
  }
  for (auto [dims, mult] : std::vector<std::pair<Dims, std::vector<int32_t>>>{
           {{2, 3}, {2, 1}}, {{2, 3}, {1, 3}}, {{3}, {0}}, {{2, 1, 2}, {2, 3, 1}}}) {
    OpCase c{absl::StrCat("Tile_", DimsName(dims), "_", absl::StrJoin(mult, "_")),
             "Tile",
             DType::kInt32,
             {dims},
             {Ints(mult)}};
    c.attrs["Tmultiples"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef(
        [](const std::vector<Tensor>& in) {
          Dims d = in[0].dims();
          for (size_t k = 0; k < d.size(); ++k) d[k] *= ElementAsInt64(in[1], k);
          return d;
        },
        [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
          *i = o;
          for (size_t k = 0; k < o.size(); ++k) (*i)[k] %= in[0].dim(static_cast<int>(k));
          return true;
        });
    cases.push_back(c);
  }
  // Pad / PadV2 / MirrorPad (REFLECT, SYMMETRIC).
  const Tensor pads = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {1, 2, 0, 3});
  const Tensor mpads = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {2, 1, 0, 3});
  auto pad_dims = [](const std::vector<Tensor>& in) {
    Dims d = in[0].dims();
    for (size_t k = 0; k < d.size(); ++k) {
      d[k] += ElementAsInt64(in[1], 2 * k) + ElementAsInt64(in[1], 2 * k + 1);
    }
    return d;
  };
  auto pad_src = [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
    *i = o;
    for (size_t k = 0; k < o.size(); ++k) {
      (*i)[k] -= ElementAsInt64(in[1], 2 * k);
      if ((*i)[k] < 0 || (*i)[k] >= in[0].dim(static_cast<int>(k))) return false;
    }
    return true;
  };
  for (DType t : {DType::kFloat32, DType::kInt32}) {
    OpCase c{absl::StrCat("Pad_", DTypeName(t)), "Pad", t, {{3, 4}}, {pads}};
    c.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef(pad_dims, pad_src);
    cases.push_back(c);
    Tensor value(t, {});
    SetFromDouble(value, 0, 7);
    OpCase v2{absl::StrCat("PadV2_", DTypeName(t)), "PadV2", t, {{3, 4}}, {pads, value}};
    v2.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
    v2.reference = IndexRef(pad_dims, pad_src, 7);
    cases.push_back(v2);
  }
  OpCase pad_empty{"Pad_empty_input", "Pad", DType::kFloat32, {{0, 4}}, {pads}};
  pad_empty.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
  pad_empty.reference = IndexRef(pad_dims, pad_src);
  cases.push_back(pad_empty);
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    const bool reflect = std::string(mode) == "REFLECT";
    OpCase c{absl::StrCat("MirrorPad_", mode), "MirrorPad", DType::kFloat32, {{3, 4}}, {mpads}};
    c.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
    c.attrs["mode"] = StringAttr(mode);
    c.reference =
        IndexRef(pad_dims, [reflect](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
          *i = o;
          for (size_t k = 0; k < o.size(); ++k) {
            const int64_t n = in[0].dim(static_cast<int>(k));
            int64_t p = o[k] - ElementAsInt64(in[1], 2 * k);
            if (p < 0) p = reflect ? -p : -p - 1;
            if (p >= n) p = reflect ? 2 * n - 2 - p : 2 * n - 1 - p;
            (*i)[k] = p;
          }
          return true;
        });
    cases.push_back(c);
  }
  for (auto axes : std::vector<std::vector<int32_t>>{{0}, {1}, {-1, 0}, {}}) {
    OpCase c{absl::StrCat("ReverseV2_", axes.empty() ? "none" : absl::StrJoin(axes, "_")),
             "ReverseV2",
             DType::kFloat32,
             {{3, 5}},
             {Ints(axes)}};
    c.attrs["Tidx"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef([](const std::vector<Tensor>& in) { return in[0].dims(); },
                           [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
                             *i = o;
                             for (int64_t k = 0; k < in[1].num_elements(); ++k) {
                               int64_t a = ElementAsInt64(in[1], k);
                               if (a < 0) a += in[0].rank();
                               (*i)[a] = in[0].dim(static_cast<int>(a)) - 1 - o[a];
                             }
                             return true;
                           });
    cases.push_back(c);
  }
  for (auto [from, to] : std::vector<std::pair<Dims, std::vector<int32_t>>>{
           {{3}, {2, 3}}, {{2, 1}, {2, 4}}, {{}, {3, 2}}, {{1, 3}, {0, 3}}}) {
    OpCase c{absl::StrCat("BroadcastTo_", DimsName(from), "_", absl::StrJoin(to, "x")),
             "BroadcastTo",
             DType::kFloat32,
             {from},
             {Ints(to)}};
    c.attrs["Tidx"] = TypeAttr(DType::kInt32);
    c.reference = IndexRef(
        [](const std::vector<Tensor>& in) {
          Dims d;
          for (int64_t k = 0; k < in[1].num_elements(); ++k) d.push_back(ElementAsInt64(in[1], k));
          return d;
        },
        [](const std::vector<Tensor>& in, const Dims& o, Dims* i) {
          const Dims& d = in[0].dims();
          i->assign(d.size(), 0);
          for (size_t k = 0; k < d.size(); ++k) {
            (*i)[k] = d[k] == 1 ? 0 : o[k + o.size() - d.size()];
          }
          return true;
        });
    cases.push_back(c);
  }
  return cases;
}

std::vector<OpCase> MiscCases() {
  std::vector<OpCase> cases;
  for (DType out : {DType::kInt32, DType::kInt64}) {
    OpCase size{absl::StrCat("Size_", DTypeName(out)), "Size", DType::kFloat32, {{2, 0, 3}}};
    size.attrs["out_type"] = TypeAttr(out);
    size.reference = [out](const std::vector<Tensor>&) {
      return Build(out, {}, [](const Dims&) { return 0.0; });
    };
    cases.push_back(size);
    OpCase size2{absl::StrCat("Size_3x4_", DTypeName(out)), "Size", DType::kFloat32, {{3, 4}}};
    size2.attrs["out_type"] = TypeAttr(out);
    size2.reference = [out](const std::vector<Tensor>&) {
      return Build(out, {}, [](const Dims&) { return 12.0; });
    };
    cases.push_back(size2);
    for (int k = 0; k < 2; ++k) {
      OpCase c{absl::StrCat("ShapeN_", DTypeName(out), "_out", k),
               "ShapeN",
               DType::kFloat32,
               {{2, 5}, {3, 0, 1}}};
      c.attrs["N"] = IntAttr(2);
      c.attrs["out_type"] = TypeAttr(out);
      c.output = k;
      c.reference = [out, k](const std::vector<Tensor>& in) {
        const Dims& d = in[static_cast<size_t>(k)].dims();
        return Build(out, {static_cast<int64_t>(d.size())},
                     [&](const Dims& i) { return static_cast<double>(d[i[0]]); });
      };
      cases.push_back(c);
    }
  }
  OpCase rank{"Rank_3d", "Rank", DType::kFloat32, {{2, 0, 3}}};
  rank.reference = [](const std::vector<Tensor>&) {
    return Build(DType::kInt32, {}, [](const Dims&) { return 3.0; });
  };
  cases.push_back(rank);
  for (auto [sq, in] : std::vector<std::pair<std::vector<int64_t>, Dims>>{
           {{}, {1, 3, 1, 2}}, {{0}, {1, 3, 1}}, {{-1, 0}, {1, 3, 1}}, {{}, {1, 1}}}) {
    OpCase c{
        absl::StrCat("Squeeze_", DimsName(in), "_", sq.empty() ? "all" : absl::StrJoin(sq, "_")),
        "Squeeze",
        DType::kFloat32,
        {in}};
    tensorflow::AttrValue dims;
    dims.mutable_list();
    for (int64_t d : sq) dims.mutable_list()->add_i(d);
    c.attrs["squeeze_dims"] = dims;
    cases.push_back(c);
  }
  for (const char* op : {"Snapshot", "PreventGradient"}) {
    OpCase c{absl::StrCat(op, "_3x4"), op, DType::kFloat32, {{3, 4}}};
    c.reference = UnaryRef([](double x) { return x; });
    cases.push_back(c);
  }
  for (int32_t axis : {0, 1, -1}) {
    OpCase c{absl::StrCat("Concat_axis", axis < 0 ? "_neg1" : std::to_string(axis)),
             "Concat",
             DType::kFloat32,
             {{2, 3}, {2, 3}},
             {Ints({axis}, true)}};
    c.consts_first = true;
    c.attrs["N"] = IntAttr(2);
    c.reference = [axis](const std::vector<Tensor>& in) {
      const size_t a = static_cast<size_t>(axis < 0 ? axis + 2 : axis);
      Dims d = in[0].dims();
      d[a] *= 2;
      return Build(DType::kFloat32, d, [&](const Dims& o) {
        Dims i = o;
        const int second = o[a] >= in[0].dims()[a];
        if (second) i[a] -= in[0].dims()[a];
        return At(in[second], i);
      });
    };
    cases.push_back(c);
  }
  struct Rg {
    DType t;
    double start, limit, delta;
  };
  for (const Rg& r : std::vector<Rg>{{DType::kInt32, 0, 10, 3},
                                     {DType::kInt32, 5, -4, -2},
                                     {DType::kInt64, 3, 3, 1},
                                     {DType::kFloat32, 0, 1, 0.1},
                                     {DType::kFloat64, -1, 2, 0.3},
                                     // 16-bit floats accumulate in their own rounding.
                                     {DType::kFloat16, 0, 2, 0.1},
                                     {DType::kBFloat16, 1, 5, 0.3}}) {
    OpCase c{absl::StrCat("Range_", DTypeName(r.t), "_", r.start, "_", r.limit, "_", r.delta),
             "Range",
             r.t,
             {},
             {Floats(r.t, {}, {r.start}), Floats(r.t, {}, {r.limit}), Floats(r.t, {}, {r.delta})}};
    c.has_t = false;
    c.attrs["Tidx"] = TypeAttr(r.t);
    c.reference = [r](const std::vector<Tensor>& in) {
      // TF's kernel accumulates value += delta in the output type.
      std::vector<double> values;
      Tensor acc = in[0];
      const double d = ElementAsDouble(in[2], 0), lim = ElementAsDouble(in[1], 0);
      const int64_t n = IsIntegerDType(r.t)
                            ? (std::abs(static_cast<int64_t>(lim - r.start)) +
                               std::abs(static_cast<int64_t>(d)) - 1) /
                                  std::abs(static_cast<int64_t>(d))
                            : static_cast<int64_t>(std::ceil(std::abs((lim - r.start) / d)));
      Tensor out(r.t, {n});
      for (int64_t k = 0; k < n; ++k) {
        SetFromDouble(out, k, ElementAsDouble(acc, 0));
        SetFromDouble(acc, 0, ElementAsDouble(acc, 0) + d);  // rounds to the type each step
      }
      return out;
    };
    cases.push_back(c);
  }
  return cases;
}

}  // namespace tfjit::optest
