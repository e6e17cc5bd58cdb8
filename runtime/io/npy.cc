// .npy reader and writer: the header dict parser, dtype mapping, size checks and NumPy's
// 64-byte header padding.
#include "runtime/io/npy.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/file_system.h"
#include "core/status.h"

namespace tfjit::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// NumPy aligns the start of the data to 64 bytes (numpy.lib.format.ARRAY_ALIGN).
constexpr size_t kArrayAlign = 64;

struct DescrEntry {
  const char* code;  // kind + item size, without the byte-order character
  DType dtype;
};

// kind/size pairs we map onto tfjit dtypes. Byte order is handled separately.
constexpr DescrEntry kDescrs[] = {
    {"f2", DType::kFloat16},   {"f4", DType::kFloat32},     {"f8", DType::kFloat64},
    {"i1", DType::kInt8},      {"i2", DType::kInt16},       {"i4", DType::kInt32},
    {"i8", DType::kInt64},     {"u1", DType::kUInt8},       {"u2", DType::kUInt16},
    {"u4", DType::kUInt32},    {"u8", DType::kUInt64},      {"b1", DType::kBool},
    {"c8", DType::kComplex64}, {"c16", DType::kComplex128},
};

// The parsed header dict.
struct NpyHeader {
  std::string descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

// A tiny parser for the Python dict literal NumPy writes:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(absl::string_view text, absl::string_view source) : text_(text), source_(source) {}

  absl::StatusOr<NpyHeader> Parse() {
    NpyHeader header;
    SkipSpace();
    if (!Consume('{')) return Error("header does not start with '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      TFJIT_ASSIGN_OR_RETURN(std::string key, ParseString());
      SkipSpace();
      if (!Consume(':')) return Error(absl::StrCat("expected ':' after key '", key, "'"));
      SkipSpace();
      TFJIT_RETURN_IF_ERROR(ParseValue(key, header));
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Error("expected ',' or '}' in the header dict");
    }
    if (header.descr.empty()) return Error("header has no 'descr' key");
    if (!header.fortran_order.has_value()) return Error("header has no 'fortran_order' key");
    if (!header.shape.has_value()) return Error("header has no 'shape' key");
    return header;
  }

 private:
  absl::Status ParseValue(const std::string& key, NpyHeader& header) {
    if (key == "descr") {
      TFJIT_ASSIGN_OR_RETURN(header.descr, ParseString());
      if (header.descr.empty()) return Error("'descr' is empty");
      return absl::OkStatus();
    }
    if (key == "fortran_order") {
      if (ConsumeWord("True")) {
        header.fortran_order = true;
      } else if (ConsumeWord("False")) {
        header.fortran_order = false;
      } else {
        return Error("'fortran_order' is not True or False");
      }
      return absl::OkStatus();
    }
    if (key == "shape") {
      TFJIT_ASSIGN_OR_RETURN(header.shape, ParseShape());
      return absl::OkStatus();
    }
    return Error(absl::StrCat("unexpected header key '", key, "'"));
  }

  absl::StatusOr<std::string> ParseString() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Error("expected a quoted string");
    }
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == absl::string_view::npos) return Error("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  absl::StatusOr<std::vector<int64_t>> ParseShape() {
    if (!Consume('(')) return Error("'shape' is not a tuple");
    std::vector<int64_t> dims;
    while (true) {
      SkipSpace();
      if (Consume(')')) break;
      if (pos_ >= text_.size() || !absl::ascii_isdigit(text_[pos_])) {
        return Error("'shape' holds something other than non-negative integers");
      }
      int64_t v = 0;
      while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return Error("dimension overflows");
        v = v * 10 + (text_[pos_++] - '0');
      }
      // Python 2 era files may write "3L".
      Consume('L');
      dims.push_back(v);
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume(')')) break;
      return Error("malformed 'shape' tuple");
    }
    return dims;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  absl::Status Error(absl::string_view what) const {
    return InvalidArgument("file '%s': malformed .npy header (%s) in \"%s\"", source_, what, text_);
  }

  absl::string_view text_;
  absl::string_view source_;
  size_t pos_ = 0;
};

// Maps a descr string ("<f4") to a dtype; UNIMPLEMENTED for big-endian or unknown types.
absl::StatusOr<DType> DTypeFromDescr(absl::string_view descr, absl::string_view source) {
  char order = '|';
  absl::string_view code = descr;
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
    order = code[0];
    code.remove_prefix(1);
  }
  for (const DescrEntry& e : kDescrs) {
    if (code != e.code) continue;
    // Byte order does not matter for one-byte types.
    if (order == '>' && DTypeSize(e.dtype) > 1) {
      return Unimplemented(
          "file '%s': big-endian .npy data ('%s') is not supported; re-save it little-endian, "
          "e.g. np.save(path, a.astype(a.dtype.newbyteorder('<')))",
          source, descr);
    }
    return e.dtype;
  }
  return Unimplemented(
      "file '%s': .npy dtype '%s' is not supported; supported: <f2 <f4 <f8 |i1 <i2 <i4 <i8 "
      "|u1 <u2 <u4 <u8 |b1 <c8 <c16",
      source, descr);
}

uint32_t ReadLittleEndian(absl::string_view bytes, size_t offset, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return v;
}

std::string ShapeText(DType dtype, const std::vector<int64_t>& dims) {
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(dims, ","), "]");
}

// Splits the file into its header text and data; checks magic, version and lengths.
absl::Status SplitFile(absl::string_view bytes, absl::string_view source, absl::string_view* header,
                       absl::string_view* data) {
  if (bytes.size() < kMagicLen + 2 || bytes.substr(0, kMagicLen) != kMagic) {
    return InvalidArgument("file '%s': not a .npy file (missing the \\x93NUMPY magic)", source);
  }
  const int major = static_cast<unsigned char>(bytes[kMagicLen]);
  const int minor = static_cast<unsigned char>(bytes[kMagicLen + 1]);
  if (major < 1 || major > 3 || minor != 0) {
    return Unimplemented("file '%s': .npy format version %d.%d is not supported (1.0, 2.0, 3.0)",
                         source, major, minor);
  }
  const size_t len_width = major == 1 ? 2 : 4;
  const size_t prefix = kMagicLen + 2 + len_width;
  if (bytes.size() < prefix) {
    return InvalidArgument("file '%s': truncated .npy header (%d bytes)", source, bytes.size());
  }
  const size_t header_len = ReadLittleEndian(bytes, kMagicLen + 2, len_width);
  if (bytes.size() - prefix < header_len) {
    return InvalidArgument(
        "file '%s': truncated .npy header: header length is %d bytes but only "
        "%d follow",
        source, header_len, bytes.size() - prefix);
  }
  *header = bytes.substr(prefix, header_len);
  *data = bytes.substr(prefix + header_len);
  return absl::OkStatus();
}

// Element count of `dims`, or nullopt on overflow past 2^62 bytes worth of elements.
std::optional<int64_t> CheckedNumElements(const std::vector<int64_t>& dims, size_t item) {
  int64_t n = 1;
  const int64_t limit = (int64_t{1} << 62) / static_cast<int64_t>(item);
  for (int64_t d : dims) {
    if (d != 0 && n > limit / d) return std::nullopt;
    n *= d;
  }
  return n;
}

}  // namespace

std::string NpyDescr(DType dtype) {
  for (const DescrEntry& e : kDescrs) {
    if (e.dtype != dtype) continue;
    const char order = DTypeSize(dtype) == 1 ? '|' : '<';
    return absl::StrCat(std::string(1, order), e.code);
  }
  return "";
}

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view source) {
  absl::string_view header_text, data;
  TFJIT_RETURN_IF_ERROR(SplitFile(bytes, source, &header_text, &data));
  HeaderParser parser(header_text, source);
  TFJIT_ASSIGN_OR_RETURN(NpyHeader header, parser.Parse());
  TFJIT_ASSIGN_OR_RETURN(DType dtype, DTypeFromDescr(header.descr, source));
  const std::vector<int64_t>& dims = *header.shape;
  if (*header.fortran_order && dims.size() > 1) {
    return Unimplemented(
        "file '%s': fortran_order (column-major) .npy arrays are not supported; save a C-order "
        "copy, e.g. np.save(path, np.ascontiguousarray(a))",
        source);
  }
  const size_t item = DTypeSize(dtype);
  std::optional<int64_t> n = CheckedNumElements(dims, item);
  if (!n.has_value()) {
    return InvalidArgument("file '%s': header shape %s is too large", source,
                           ShapeText(dtype, dims));
  }
  const size_t expected = static_cast<size_t>(*n) * item;
  if (data.size() != expected) {
    return InvalidArgument("file '%s': data has %d bytes, header says %s (%d bytes)", source,
                           data.size(), ShapeText(dtype, dims), expected);
  }
  Tensor tensor(dtype, dims);
  if (expected > 0) std::memcpy(tensor.raw_data(), data.data(), expected);
  if (dtype == DType::kBool) {
    // NumPy bools are one byte 0/1; normalise anything else so comparisons stay well-defined.
    uint8_t* p = static_cast<uint8_t*>(tensor.raw_data());
    for (int64_t i = 0; i < *n; ++i) p[i] = p[i] != 0 ? 1 : 0;
  }
  return tensor;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("file '%s': cannot open .npy file", path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return FailedPrecondition("file '%s': read error", path);
  return ParseNpy(bytes, path);
}

std::string SerializeNpy(const Tensor& tensor) {
  const std::string descr = NpyDescr(tensor.dtype());
  if (descr.empty()) return "";
  // Python's repr of a tuple: "()", "(3,)", "(2, 3)".
  std::string shape = absl::StrCat("(", absl::StrJoin(tensor.dims(), ", "));
  absl::StrAppend(&shape, tensor.rank() == 1 ? ",)" : ")");
  // Keys sorted, each followed by ", ", as numpy.lib.format writes them.
  std::string dict =
      absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Version 1.0 stores the header length in 2 bytes; fall back to 2.0 beyond that.
  int major = 1;
  size_t len_width = 2;
  size_t hlen = dict.size() + 1;  // + the terminating '\n'
  size_t pad = kArrayAlign - (kMagicLen + 2 + len_width + hlen) % kArrayAlign;
  if (hlen + pad > 0xffff) {
    major = 2;
    len_width = 4;
    pad = kArrayAlign - (kMagicLen + 2 + len_width + hlen) % kArrayAlign;
  }
  const size_t header_len = hlen + pad;
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t i = 0; i < len_width; ++i) {
    out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
  }
  out += dict;
  out.append(pad, ' ');
  out.push_back('\n');
  out.append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
  return out;
}

absl::Status WriteNpy(const std::string& path, const Tensor& tensor) {
  if (NpyDescr(tensor.dtype()).empty()) {
    return Unimplemented(
        "cannot write %s to '%s': .npy has no %s dtype; cast it first (e.g. to "
        "float32)",
        tensor.ShapeString(), path, DTypeName(tensor.dtype()));
  }
  // All or nothing (a temporary name renamed into place): a full disk or a read-only folder
  // leaves no half-written file behind, and an existing file is kept until the new one is
  // complete.
  absl::StatusOr<Published> written = WriteFileAtomically(path, SerializeNpy(tensor));
  if (!written.ok()) {
    return FailedPrecondition("cannot write '%s': %s", path, written.status().message());
  }
  return absl::OkStatus();
}

}  // namespace tfjit::runtime
