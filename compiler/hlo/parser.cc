// The HLO text parser: a character-level recursive-descent reader of the printer's output
// (names with or without '%', `//` comments ignored). Errors carry line and column.
#include "compiler/hlo/parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/verifier.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::hlo {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// Everything an instruction line may set besides opcode, shape and operands.
struct ParsedAttrs {
  Attributes attrs;
  Metadata metadata;
  Computation* to_apply = nullptr;
  Computation* calls = nullptr;
  Computation* condition = nullptr;
  Computation* body = nullptr;
  std::vector<Computation*> branches;
};

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}
  absl::StatusOr<std::unique_ptr<Module>> Run();

 private:
  // ---- Lexing helpers ----
  void SkipSpace();
  bool AtEnd() { return pos_ >= text_.size(); }
  char Peek() { return AtEnd() ? '\0' : text_[pos_]; }
  bool TryConsume(absl::string_view s);
  bool TryKeyword(absl::string_view word);
  absl::Status Expect(absl::string_view s);
  absl::Status ErrorAt(size_t pos, absl::string_view expected, std::string found = "");
  std::string FoundAt(size_t pos);
  std::string ReadWhile(bool (*pred)(char));
  absl::StatusOr<std::string> ParseName(absl::string_view what);
  absl::StatusOr<int64_t> ParseInt();
  // `symbolic_first`: the first entry may be a symbolic size (symbolic.h), valued at the
  // module's representative batch size.
  absl::StatusOr<std::vector<int64_t>> ParseIntList(bool symbolic_first = false);
  absl::StatusOr<int64_t> ParseIntOrSymbolic(bool symbolic);
  absl::StatusOr<std::string> ParseQuoted();

  // ---- Grammar ----
  absl::StatusOr<Shape> ParseShape();
  absl::StatusOr<std::optional<SymbolicExtent>> ParseSymbolicExtent();
  absl::Status ParseLiteralInto(Literal* literal);
  absl::Status ParseNestedElements(Tensor* t, int dim, int64_t* index);
  absl::Status ParseElement(Tensor* t, int64_t index);
  absl::Status ParseComputation();
  absl::Status ParseInstruction(Computation* comp,
                                absl::flat_hash_map<std::string, Instruction*>* scope);
  absl::Status ParseOperands(Opcode opcode, const Shape& shape,
                             const absl::flat_hash_map<std::string, Instruction*>& scope,
                             ParsedAttrs* parsed, std::vector<Instruction*>* operands);
  absl::Status ParseAttribute(const std::string& key, size_t key_pos, ParsedAttrs* out);
  absl::StatusOr<Computation*> ParseComputationRef();
  absl::Status ParseSlice(std::vector<SliceDim>* out);
  absl::Status ParsePadding(std::vector<PadDim>* out);
  absl::Status ParseWindow(std::vector<WindowDim>* out);
  absl::Status ParseDimLabels(ConvDims* out);
  absl::Status ParseMetadata(Metadata* out);

  absl::string_view text_;
  size_t pos_ = 0;
  std::unique_ptr<Module> module_;
  absl::flat_hash_map<std::string, Computation*> computations_;
  absl::flat_hash_set<std::string> instruction_names_;
  Computation* entry_ = nullptr;
  Instruction* last_added_ = nullptr;
};

// Constants are materialised while parsing, so their size is checked before the literal is
// allocated: at most 2^31 elements (the old cap), and no more elements than `budget`, the
// characters of text left, since every element is written out with at least one character.
// Without the second check a few bytes of text ("f32[1000000000] constant(...") would cost
// gigabytes before the parse fails. Dims of 0 count as 1 for the overflow guard.
bool FitsInMemory(const Shape& shape, int64_t budget, int64_t* used) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (!FitsInMemory(s, budget, used)) return false;
    }
    return true;
  }
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : shape.dims()) {
    if (d > (int64_t{1} << 31) || (n *= std::max<int64_t>(d, 1)) > (int64_t{1} << 31)) {
      return false;
    }
    empty = empty || d == 0;
  }
  *used += empty ? 0 : n;
  return *used <= budget;
}

void Parser::SkipSpace() {
  while (!AtEnd()) {
    if (std::isspace(static_cast<unsigned char>(Peek()))) {
      ++pos_;
    } else if (text_.substr(pos_, 2) == "//") {
      while (!AtEnd() && Peek() != '\n') ++pos_;
    } else {
      return;
    }
  }
}

bool Parser::TryConsume(absl::string_view s) {
  SkipSpace();
  if (text_.substr(pos_, s.size()) != s) return false;
  pos_ += s.size();
  return true;
}

// Like TryConsume, but `word` must not continue as a longer name ("ROOT" vs "ROOTx").
bool Parser::TryKeyword(absl::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  const size_t end = pos_ + word.size();
  if (end < text_.size() && IsNameChar(text_[end])) return false;
  pos_ = end;
  return true;
}

absl::Status Parser::Expect(absl::string_view s) {
  if (TryConsume(s)) return absl::OkStatus();
  return ErrorAt(pos_, absl::StrCat("'", s, "'"));
}

std::string Parser::FoundAt(size_t pos) {
  if (pos >= text_.size()) return "end of input";
  size_t end = pos;
  while (end < text_.size() && end - pos < 24 &&
         !std::isspace(static_cast<unsigned char>(text_[end]))) {
    ++end;
  }
  if (end == pos) end = pos + 1;
  return absl::StrCat("'", text_.substr(pos, end - pos), "'");
}

absl::Status Parser::ErrorAt(size_t pos, absl::string_view expected, std::string found) {
  int line = 1, column = 1;
  for (size_t i = 0; i < pos && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  if (found.empty()) found = FoundAt(pos);
  return InvalidArgument("line %d, column %d: expected %s, found %s", line, column, expected,
                         found);
}

std::string Parser::ReadWhile(bool (*pred)(char)) {
  const size_t start = pos_;
  while (!AtEnd() && pred(Peek())) ++pos_;
  return std::string(text_.substr(start, pos_ - start));
}

absl::StatusOr<std::string> Parser::ParseName(absl::string_view what) {
  SkipSpace();
  const size_t start = pos_;
  // '%' is the printer's sigil; '@' is DESIGN.md's spelling for computations.
  if (Peek() == '%' || Peek() == '@') ++pos_;
  std::string name = ReadWhile(IsNameChar);
  if (name.empty()) return ErrorAt(start, what);
  return name;
}

absl::StatusOr<int64_t> Parser::ParseInt() {
  SkipSpace();
  const size_t start = pos_;
  if (Peek() == '-' || Peek() == '+') ++pos_;
  while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
  int64_t value = 0;
  const bool plus = start < text_.size() && text_[start] == '+';
  const char* first = text_.data() + start + (plus ? 1 : 0);
  auto [ptr, ec] = std::from_chars(first, text_.data() + pos_, value);
  if (ec != std::errc() || ptr != text_.data() + pos_) {
    pos_ = start;
    return ErrorAt(start, "an integer");
  }
  return value;
}

absl::StatusOr<int64_t> Parser::ParseIntOrSymbolic(bool symbolic) {
  const size_t at = pos_;
  TFJIT_ASSIGN_OR_RETURN(std::optional<SymbolicExtent> e, ParseSymbolicExtent());
  if (!e.has_value()) return ParseInt();
  if (!symbolic) return ErrorAt(at, "an integer (only a size along dim 0 may be symbolic)");
  if (module_->batch_representative() == 0) {
    return ErrorAt(at, "an integer (a symbolic size needs a symbolic shape before it)");
  }
  return e->At(module_->batch_representative());
}

absl::StatusOr<std::vector<int64_t>> Parser::ParseIntList(bool symbolic_first) {
  TFJIT_RETURN_IF_ERROR(Expect("{"));
  std::vector<int64_t> out;
  if (TryConsume("}")) return out;
  do {
    TFJIT_ASSIGN_OR_RETURN(int64_t v, ParseIntOrSymbolic(symbolic_first && out.empty()));
    out.push_back(v);
  } while (TryConsume(","));
  TFJIT_RETURN_IF_ERROR(Expect("}"));
  return out;
}

absl::StatusOr<std::string> Parser::ParseQuoted() {
  TFJIT_RETURN_IF_ERROR(Expect("\""));
  std::string out;
  while (!AtEnd() && Peek() != '"') {
    char c = text_[pos_++];
    if (c == '\\' && !AtEnd()) {
      c = text_[pos_++];
      if (c == 'n') c = '\n';
    }
    out.push_back(c);
  }
  TFJIT_RETURN_IF_ERROR(Expect("\""));
  return out;
}

absl::StatusOr<Shape> Parser::ParseShape() {
  SkipSpace();
  if (TryConsume("(")) {
    std::vector<Shape> elements;
    if (!TryConsume(")")) {
      do {
        TFJIT_ASSIGN_OR_RETURN(Shape s, ParseShape());
        elements.push_back(std::move(s));
      } while (TryConsume(","));
      TFJIT_RETURN_IF_ERROR(Expect(")"));
    }
    return Shape::Tuple(std::move(elements));
  }
  const size_t start = pos_;
  std::string type =
      ReadWhile([](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
  std::optional<DType> dtype = DTypeFromHloName(type);
  if (!dtype.has_value()) {
    pos_ = start;
    return ErrorAt(start, "a shape such as f32[2,3]");
  }
  TFJIT_RETURN_IF_ERROR(Expect("["));
  std::vector<int64_t> dims;
  std::optional<SymbolicExtent> dim0;
  if (!TryConsume("]")) {
    do {
      const size_t dim_pos = pos_;
      TFJIT_ASSIGN_OR_RETURN(std::optional<SymbolicExtent> symbolic, ParseSymbolicExtent());
      if (symbolic.has_value()) {
        if (!dims.empty()) return ErrorAt(dim_pos, "a static dimension (only dim 0 is symbolic)");
        dim0 = symbolic;
        dims.push_back(0);
        continue;
      }
      TFJIT_ASSIGN_OR_RETURN(int64_t d, ParseInt());
      if (d < 0) return ErrorAt(dim_pos, "a dimension >= 0");
      dims.push_back(d);
    } while (TryConsume(","));
    TFJIT_RETURN_IF_ERROR(Expect("]"));
  }
  // XLA prints a layout after the dims (f32[2,3]{1,0}); it carries no meaning here.
  if (Peek() == '{') {
    while (!AtEnd() && Peek() != '}') ++pos_;
    TFJIT_RETURN_IF_ERROR(Expect("}"));
  }
  Shape shape(*dtype, std::move(dims));
  if (dim0.has_value()) {
    if (module_->batch_representative() == 0) {
      module_->set_batch_representative(kDefaultBatchRepresentative);
    }
    shape.SetSymbolicDim0(*dim0, module_->batch_representative());
  }
  return shape;
}

// A symbolic extent (k*?b+c, k >= 1; "?b", "4*?b", "?b-1"), or nullopt (pos_ unchanged) when
// the text there is not one.
absl::StatusOr<std::optional<SymbolicExtent>> Parser::ParseSymbolicExtent() {
  SkipSpace();
  const size_t start = pos_;
  SymbolicExtent e{1, 0};
  if (std::isdigit(static_cast<unsigned char>(Peek()))) {
    absl::StatusOr<int64_t> k = ParseInt();
    if (!k.ok() || !TryConsume("*")) {
      pos_ = start;
      return std::nullopt;
    }
    e.k = *k;
    if (e.k < 1) return ErrorAt(start, "a factor >= 1 of ?b");
  }
  if (!TryConsume("?b")) {
    if (pos_ != start) return ErrorAt(pos_, "?b after the factor");
    return std::nullopt;
  }
  if (Peek() == '+' || Peek() == '-') {
    TFJIT_ASSIGN_OR_RETURN(e.c, ParseInt());
  }
  return e;
}

template <typename T>
bool ParseNumber(absl::string_view token, T* out) {
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && ptr == token.data() + token.size();
}

// Parses one element token into a value of type T; false when it does not fit.
template <typename T>
bool ParseElementToken(absl::string_view token, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (token == "true" || token == "1")
      *out = true;
    else if (token == "false" || token == "0")
      *out = false;
    else
      return false;
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    Wide v = 0;
    if (!ParseNumber(token, &v) || v < std::numeric_limits<T>::min() ||
        v > std::numeric_limits<T>::max()) {
      return false;
    }
    *out = static_cast<T>(v);
    return true;
  } else {
    // f16/bf16 parse as float: the printer writes the float value's shortest form.
    using Parse = std::conditional_t<std::is_same_v<T, double>, double, float>;
    Parse v = 0;
    const bool negative = !token.empty() && token[0] == '-';
    const absl::string_view body = negative ? token.substr(1) : token;
    if (body == "nan") {
      v = std::numeric_limits<Parse>::quiet_NaN();
    } else if (body == "inf") {
      v = std::numeric_limits<Parse>::infinity();
    } else if (!ParseNumber(body, &v)) {
      return false;
    }
    *out = static_cast<T>(negative ? -v : v);
    return true;
  }
}

absl::Status Parser::ParseElement(Tensor* t, int64_t index) {
  SkipSpace();
  const size_t start = pos_;
  std::string token = ReadWhile([](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
           c == '_';
  });
  bool ok = false;
  DispatchNumeric(t->dtype(), [&](auto tag) {
    using T = decltype(tag);
    ok = ParseElementToken<T>(token, t->data<T>() + index);
  });
  if (!ok) {
    return ErrorAt(start, absl::StrCat("a ", DTypeHloName(t->dtype()), " value"));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseNestedElements(Tensor* t, int dim, int64_t* index) {
  if (dim == t->rank()) return ParseElement(t, (*index)++);
  TFJIT_RETURN_IF_ERROR(Expect("{"));
  for (int64_t i = 0; i < t->dim(dim); ++i) {
    if (i > 0) TFJIT_RETURN_IF_ERROR(Expect(","));
    TFJIT_RETURN_IF_ERROR(ParseNestedElements(t, dim + 1, index));
  }
  return Expect("}");
}

absl::Status Parser::ParseLiteralInto(Literal* literal) {
  if (literal->shape().IsTuple()) {
    TFJIT_RETURN_IF_ERROR(Expect("("));
    for (size_t i = 0; i < literal->mutable_elements().size(); ++i) {
      if (i > 0) TFJIT_RETURN_IF_ERROR(Expect(","));
      TFJIT_RETURN_IF_ERROR(ParseLiteralInto(&literal->mutable_elements()[i]));
    }
    return Expect(")");
  }
  int64_t index = 0;
  return ParseNestedElements(&literal->mutable_tensor(), 0, &index);
}

absl::StatusOr<Computation*> Parser::ParseComputationRef() {
  SkipSpace();
  const size_t start = pos_;
  TFJIT_ASSIGN_OR_RETURN(std::string name, ParseName("a computation name"));
  auto it = computations_.find(name);
  if (it == computations_.end()) return ErrorAt(start, "a computation defined earlier");
  return it->second;
}

absl::Status Parser::ParseSlice(std::vector<SliceDim>* out) {
  TFJIT_RETURN_IF_ERROR(Expect("{"));
  if (TryConsume("}")) return absl::OkStatus();
  do {
    SliceDim s;
    TFJIT_RETURN_IF_ERROR(Expect("["));
    TFJIT_ASSIGN_OR_RETURN(s.start, ParseInt());
    TFJIT_RETURN_IF_ERROR(Expect(":"));
    TFJIT_ASSIGN_OR_RETURN(s.limit, ParseIntOrSymbolic(out->empty()));
    if (TryConsume(":")) {
      TFJIT_ASSIGN_OR_RETURN(s.stride, ParseInt());
    }
    TFJIT_RETURN_IF_ERROR(Expect("]"));
    out->push_back(s);
  } while (TryConsume(","));
  return Expect("}");
}

absl::Status Parser::ParsePadding(std::vector<PadDim>* out) {
  if (TryConsume("{")) return Expect("}");  // rank 0
  do {
    PadDim p;
    TFJIT_ASSIGN_OR_RETURN(p.lo, ParseInt());
    TFJIT_RETURN_IF_ERROR(Expect("_"));
    TFJIT_ASSIGN_OR_RETURN(p.hi, ParseInt());
    if (Peek() == '_') {
      ++pos_;
      TFJIT_ASSIGN_OR_RETURN(p.interior, ParseInt());
    }
    out->push_back(p);
  } while (Peek() == 'x' && ++pos_);
  return absl::OkStatus();
}

// window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1}; absent fields keep
// their defaults.
absl::Status Parser::ParseWindow(std::vector<WindowDim>* out) {
  TFJIT_RETURN_IF_ERROR(Expect("{"));
  while (!TryConsume("}")) {
    SkipSpace();
    const size_t key_pos = pos_;
    const std::string key =
        ReadWhile([](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; });
    TFJIT_RETURN_IF_ERROR(Expect("="));
    size_t i = 0;
    do {
      if (out->size() <= i) out->resize(i + 1);
      WindowDim& w = (*out)[i++];
      if (key == "pad") {
        TFJIT_ASSIGN_OR_RETURN(w.pad_lo, ParseInt());
        TFJIT_RETURN_IF_ERROR(Expect("_"));
        TFJIT_ASSIGN_OR_RETURN(w.pad_hi, ParseInt());
        continue;
      }
      int64_t* field = key == "size"         ? &w.size
                       : key == "stride"     ? &w.stride
                       : key == "lhs_dilate" ? &w.lhs_dilate
                       : key == "rhs_dilate" ? &w.rhs_dilate
                                             : nullptr;
      if (field == nullptr) {
        return ErrorAt(key_pos, "size, stride, pad, lhs_dilate or rhs_dilate");
      }
      TFJIT_ASSIGN_OR_RETURN(*field, ParseInt());
    } while (Peek() == 'x' && ++pos_);
  }
  return absl::OkStatus();
}

// "b01f_01io->b01f": letters name batch/feature (input, output) or input/output feature
// (kernel); digits name spatial dims.
absl::Status Parser::ParseDimLabels(ConvDims* out) {
  SkipSpace();
  const size_t start = pos_;
  const std::string text = ReadWhile([](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '>';
  });
  const size_t underscore = text.find('_');
  const size_t arrow = text.find("->");
  if (underscore == std::string::npos || arrow == std::string::npos || arrow < underscore) {
    return ErrorAt(start, "dim_labels such as b01f_01io->b01f");
  }
  const std::string groups[3] = {text.substr(0, underscore),
                                 text.substr(underscore + 1, arrow - underscore - 1),
                                 text.substr(arrow + 2)};
  const char letters[3][2] = {{'b', 'f'}, {'i', 'o'}, {'b', 'f'}};
  int64_t* first[3] = {&out->input_batch, &out->kernel_input_feature, &out->output_batch};
  int64_t* second[3] = {&out->input_feature, &out->kernel_output_feature, &out->output_feature};
  std::vector<int64_t>* spatial[3] = {&out->input_spatial, &out->kernel_spatial,
                                      &out->output_spatial};
  for (int g = 0; g < 3; ++g) {
    const std::string& labels = groups[g];
    if (labels.size() < 2 || labels.size() != groups[0].size()) {
      return ErrorAt(start, "dim_labels groups of equal rank >= 2");
    }
    spatial[g]->assign(labels.size() - 2, -1);
    int found = 0;
    for (size_t pos = 0; pos < labels.size(); ++pos) {
      const char c = labels[pos];
      const size_t digit = static_cast<size_t>(c - '0');
      if (c == letters[g][0]) {
        *first[g] = static_cast<int64_t>(pos), found |= 1;
      } else if (c == letters[g][1]) {
        *second[g] = static_cast<int64_t>(pos), found |= 2;
      } else if (std::isdigit(static_cast<unsigned char>(c)) && digit < spatial[g]->size() &&
                 (*spatial[g])[digit] < 0) {
        (*spatial[g])[digit] = static_cast<int64_t>(pos);
      } else {
        return ErrorAt(start, "dim_labels such as b01f_01io->b01f");
      }
    }
    if (found != 3) return ErrorAt(start, "dim_labels such as b01f_01io->b01f");
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseMetadata(Metadata* out) {
  TFJIT_RETURN_IF_ERROR(Expect("{"));
  while (!TryConsume("}")) {
    SkipSpace();
    const size_t key_pos = pos_;
    const std::string key =
        ReadWhile([](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; });
    TFJIT_RETURN_IF_ERROR(Expect("="));
    if (key == "source_line") {
      TFJIT_ASSIGN_OR_RETURN(int64_t line, ParseInt());
      out->source_line = static_cast<int>(line);
    } else {
      std::string* field = key == "tf_node"       ? &out->tf_node
                           : key == "tf_op"       ? &out->tf_op
                           : key == "source_file" ? &out->source_file
                                                  : nullptr;
      if (field == nullptr) return ErrorAt(key_pos, "tf_node, tf_op, source_file or source_line");
      TFJIT_ASSIGN_OR_RETURN(*field, ParseQuoted());
    }
    TryConsume(",");  // DESIGN.md separates fields with commas, the printer with spaces.
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseAttribute(const std::string& key, size_t key_pos, ParsedAttrs* out) {
  Attributes& a = out->attrs;
  const absl::flat_hash_map<std::string, std::vector<int64_t>*> lists = {
      {"dimensions", &a.dimensions},
      {"dynamic_slice_sizes", &a.dynamic_slice_sizes},
      {"lhs_batch_dims", &a.dot.lhs_batch},
      {"rhs_batch_dims", &a.dot.rhs_batch},
      {"lhs_contracting_dims", &a.dot.lhs_contracting},
      {"rhs_contracting_dims", &a.dot.rhs_contracting},
      {"offset_dims", &a.gather.offset_dims},
      {"collapsed_slice_dims", &a.gather.collapsed_slice_dims},
      {"start_index_map", &a.gather.start_index_map},
      {"slice_sizes", &a.gather.slice_sizes},
      {"update_window_dims", &a.scatter.update_window_dims},
      {"inserted_window_dims", &a.scatter.inserted_window_dims},
      {"scatter_dims_to_operand_dims", &a.scatter.scatter_dims_to_operand_dims}};
  if (auto it = lists.find(key); it != lists.end()) {
    TFJIT_ASSIGN_OR_RETURN(*it->second,
                           ParseIntList(key == "dynamic_slice_sizes" || key == "slice_sizes"));
    return absl::OkStatus();
  }
  const absl::flat_hash_map<std::string, int64_t*> ints = {
      {"index", &a.tuple_index},
      {"iota_dimension", &a.iota_dimension},
      {"feature_group_count", &a.feature_group_count},
      {"index_vector_dim", &a.gather.index_vector_dim}};
  if (auto it = ints.find(key); it != ints.end()) {
    TFJIT_ASSIGN_OR_RETURN(*it->second, ParseInt());
    a.scatter.index_vector_dim = a.gather.index_vector_dim;
    return absl::OkStatus();
  }
  if (key == "slice") return ParseSlice(&a.slice);
  if (key == "padding") return ParsePadding(&a.padding);
  if (key == "window") return ParseWindow(&a.window);
  if (key == "dim_labels") return ParseDimLabels(&a.conv);
  if (key == "meta") return ParseMetadata(&out->metadata);
  if (key == "custom_call_target") {
    TFJIT_ASSIGN_OR_RETURN(a.custom_call_target, ParseQuoted());
    return absl::OkStatus();
  }
  if (key == "kind" || key == "algorithm" || key == "direction") {
    SkipSpace();
    const size_t start = pos_;
    std::string word = ReadWhile(IsNameChar);
    if (key == "kind") {
      a.fusion_kind = word;
    } else if (key == "algorithm") {
      a.rng_algorithm = word;
    } else {
      auto dir = ComparisonDirectionFromName(word);
      if (!dir.has_value()) return ErrorAt(start, "EQ, NE, LT, LE, GT or GE");
      a.comparison = *dir;
    }
    if (word.empty()) return ErrorAt(start, absl::StrCat("a value for ", key));
    return absl::OkStatus();
  }
  Computation** single = key == "to_apply"    ? &out->to_apply
                         : key == "calls"     ? &out->calls
                         : key == "condition" ? &out->condition
                         : key == "body"      ? &out->body
                                              : nullptr;
  if (single != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(*single, ParseComputationRef());
    return absl::OkStatus();
  }
  if (key == "branch_computations") {
    TFJIT_RETURN_IF_ERROR(Expect("{"));
    if (TryConsume("}")) return absl::OkStatus();
    do {
      TFJIT_ASSIGN_OR_RETURN(Computation * c, ParseComputationRef());
      out->branches.push_back(c);
    } while (TryConsume(","));
    return Expect("}");
  }
  return ErrorAt(key_pos, "an attribute name");
}

// The called computations of `opcode` in Instruction's fixed order.
std::vector<Computation*> CalledFor(Opcode opcode, const ParsedAttrs& p) {
  auto present = [](std::initializer_list<Computation*> cs) {
    std::vector<Computation*> out;
    for (Computation* c : cs) {
      if (c != nullptr) out.push_back(c);
    }
    return out;
  };
  switch (opcode) {
    case Opcode::kFusion:
      return present({p.calls});
    case Opcode::kWhile:
      return present({p.condition, p.body});
    case Opcode::kConditional:
      return p.branches;
    default:
      return present({p.to_apply});
  }
}

// The parenthesised part: a parameter number, a constant's literal or operand names.
absl::Status Parser::ParseOperands(Opcode opcode, const Shape& shape,
                                   const absl::flat_hash_map<std::string, Instruction*>& scope,
                                   ParsedAttrs* parsed, std::vector<Instruction*>* operands) {
  const size_t open_pos = pos_;
  TFJIT_RETURN_IF_ERROR(Expect("("));
  if (opcode == Opcode::kParameter) {
    TFJIT_ASSIGN_OR_RETURN(parsed->attrs.parameter_number, ParseInt());
    if (parsed->attrs.parameter_number < 0) return ErrorAt(open_pos, "a parameter number >= 0");
    // Parameter numbers are dense and each parameter is an instruction of the text, so a
    // number beyond the text's length is malformed (and would size the parameter table).
    if (parsed->attrs.parameter_number >= static_cast<int64_t>(text_.size())) {
      return ErrorAt(open_pos, "a parameter number below the number of parameters");
    }
  } else if (opcode == Opcode::kConstant) {
    int64_t elements = 0;
    if (!FitsInMemory(shape, static_cast<int64_t>(text_.size() - pos_), &elements)) {
      return ErrorAt(open_pos, "a constant of at most 2^31 elements, each written in the text");
    }
    Literal literal(shape);
    TFJIT_RETURN_IF_ERROR(ParseLiteralInto(&literal));
    parsed->attrs.literal = std::move(literal);
  } else if (!TryConsume(")")) {
    do {
      SkipSpace();
      const size_t operand_pos = pos_;
      TFJIT_ASSIGN_OR_RETURN(std::string operand, ParseName("an operand name"));
      auto it = scope.find(operand);
      if (it == scope.end()) {
        return ErrorAt(operand_pos, "an instruction defined earlier in this computation");
      }
      operands->push_back(it->second);
    } while (TryConsume(","));
  } else {
    --pos_;  // Give the ')' back to the common Expect below.
  }
  return Expect(")");
}

absl::Status Parser::ParseInstruction(Computation* comp,
                                      absl::flat_hash_map<std::string, Instruction*>* scope) {
  const bool is_root = TryKeyword("ROOT");
  SkipSpace();
  const size_t name_pos = pos_;
  TFJIT_ASSIGN_OR_RETURN(std::string name, ParseName("an instruction name"));
  if (instruction_names_.contains(name)) {
    return ErrorAt(name_pos, "a new instruction name",
                   absl::StrCat("'", name, "' (already defined)"));
  }
  TFJIT_RETURN_IF_ERROR(Expect("="));
  TFJIT_ASSIGN_OR_RETURN(Shape shape, ParseShape());
  SkipSpace();
  const size_t op_pos = pos_;
  const std::string op_name =
      ReadWhile([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
  std::optional<Opcode> opcode = OpcodeFromName(op_name);
  if (!opcode.has_value()) return ErrorAt(op_pos, "an opcode");
  auto inst = std::make_unique<Instruction>(*opcode, shape);
  ParsedAttrs parsed;
  std::vector<Instruction*> operands;
  TFJIT_RETURN_IF_ERROR(ParseOperands(*opcode, shape, *scope, &parsed, &operands));
  while (TryConsume(",")) {
    SkipSpace();
    const size_t key_pos = pos_;
    const std::string key =
        ReadWhile([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    TFJIT_RETURN_IF_ERROR(Expect("="));
    TFJIT_RETURN_IF_ERROR(ParseAttribute(key, key_pos, &parsed));
  }
  inst->set_name(name);
  inst->set_called_computations(CalledFor(*opcode, parsed));
  inst->mutable_attrs() = std::move(parsed.attrs);
  inst->set_metadata(std::move(parsed.metadata));
  instruction_names_.insert(name);
  Instruction* added = comp->AddInstruction(std::move(inst), operands);
  last_added_ = added;
  (*scope)[name] = added;
  if (is_root) {
    if (comp->root() != nullptr) return ErrorAt(name_pos, "a single ROOT per computation");
    comp->set_root(added);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseComputation() {
  const bool is_entry = TryKeyword("ENTRY");
  TryKeyword("computation");  // DESIGN.md's spelling: `computation @name (...) -> ... {`
  SkipSpace();
  const size_t name_pos = pos_;
  TFJIT_ASSIGN_OR_RETURN(std::string name, ParseName("a computation name"));
  if (computations_.contains(name)) {
    return ErrorAt(name_pos, "a new computation name",
                   absl::StrCat("'", name, "' (already defined)"));
  }
  if (is_entry && entry_ != nullptr) return ErrorAt(name_pos, "a single ENTRY computation");
  std::vector<std::pair<std::string, Shape>> params;
  TFJIT_RETURN_IF_ERROR(Expect("("));
  if (!TryConsume(")")) {
    do {
      TFJIT_ASSIGN_OR_RETURN(std::string param, ParseName("a parameter name"));
      TFJIT_RETURN_IF_ERROR(Expect(":"));
      TFJIT_ASSIGN_OR_RETURN(Shape shape, ParseShape());
      params.emplace_back(std::move(param), std::move(shape));
    } while (TryConsume(","));
    TFJIT_RETURN_IF_ERROR(Expect(")"));
  }
  TFJIT_RETURN_IF_ERROR(Expect("->"));
  TFJIT_ASSIGN_OR_RETURN(Shape result, ParseShape());
  TFJIT_RETURN_IF_ERROR(Expect("{"));
  Computation* comp = module_->AddComputation(name);
  computations_[name] = comp;
  if (is_entry) entry_ = comp;
  absl::flat_hash_map<std::string, Instruction*> scope;
  Instruction* last = nullptr;
  while (!TryConsume("}")) {
    if (AtEnd()) return ErrorAt(pos_, "'}'");
    TFJIT_RETURN_IF_ERROR(ParseInstruction(comp, &scope));
    last = last_added_;
  }
  // Like XLA, an unmarked computation returns its last instruction.
  if (comp->root() == nullptr) comp->set_root(last);
  if (comp->root() == nullptr) return ErrorAt(name_pos, "a computation with instructions");
  bool params_ok = comp->num_parameters() == static_cast<int>(params.size());
  for (size_t i = 0; params_ok && i < params.size(); ++i) {
    const Instruction* p = comp->parameter(static_cast<int>(i));
    params_ok = p != nullptr && p->shape() == params[i].second;
  }
  if (!params_ok) {
    return ErrorAt(name_pos, "parameter instructions matching the header's parameters",
                   absl::StrCat("'", name, "' with different parameters"));
  }
  if (result != comp->ResultShape()) {
    return ErrorAt(name_pos, absl::StrCat("a ROOT of the header's shape ", result.ToString()),
                   comp->ResultShape().ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Module>> Parser::Run() {
  TFJIT_RETURN_IF_ERROR(Expect("HloModule"));
  TFJIT_ASSIGN_OR_RETURN(std::string name, ParseName("a module name"));
  // XLA appends ", entry_computation_layout=..." to this line; nothing there matters here.
  while (!AtEnd() && Peek() != '\n') ++pos_;
  module_ = std::make_unique<Module>(name);
  SkipSpace();
  while (!AtEnd()) {
    TFJIT_RETURN_IF_ERROR(ParseComputation());
    SkipSpace();
  }
  if (module_->computations().empty()) return ErrorAt(pos_, "a computation");
  module_->set_entry(entry_ != nullptr ? entry_ : module_->computations().back());
  return std::move(module_);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseModule(absl::string_view text) {
  return Parser(text).Run();
}

absl::StatusOr<std::unique_ptr<Module>> ParseAndVerifyModule(absl::string_view text) {
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModule(text));
  TFJIT_RETURN_IF_ERROR(VerifyModule(*module));
  return module;
}

}  // namespace tfjit::hlo
