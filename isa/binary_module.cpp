#include "isa/binary_module.h"

#include <cstring>

namespace mtlemu::isa {
namespace {

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(v); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v));
    U32(static_cast<uint32_t>(v >> 32));
  }
  void String(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void Bytes(const std::vector<uint8_t>& bytes) {
    out_.insert(out_.end(), bytes.begin(), bytes.end());
  }
  std::vector<uint8_t> Take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : data_(data) {}
  bool ok() const { return ok_; }
  uint8_t U8() {
    if (!Need(1)) return 0;
    return data_[pos_++];
  }
  uint32_t U32() {
    if (!Need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(data_[pos_++]) << (8 * i);
    return v;
  }
  uint64_t U64() {
    const uint64_t lo = U32();
    return lo | (static_cast<uint64_t>(U32()) << 32);
  }
  std::string String() {
    const uint32_t n = U32();
    if (!Need(n)) return {};
    std::string s(reinterpret_cast<const char*>(data_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A byte array: its size, then the bytes.
  std::vector<uint8_t> Bytes() {
    const uint32_t n = U32();
    if (!Need(n)) return {};
    std::vector<uint8_t> bytes(data_.begin() + pos_, data_.begin() + pos_ + n);
    pos_ += n;
    return bytes;
  }
  // A count of items each at least `min_size` bytes: bounded by what is
  // left, so a damaged count cannot make a huge allocation.
  uint32_t Count(size_t min_size) {
    const uint32_t n = U32();
    if (ok_ && static_cast<uint64_t>(n) * min_size > data_.size() - pos_) {
      ok_ = false;
      return 0;
    }
    return n;
  }
  bool AtEnd() const { return pos_ == data_.size(); }

 private:
  bool Need(size_t n) {
    if (!ok_ || data_.size() - pos_ < n) {
      ok_ = false;
      return false;
    }
    return true;
  }
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

void WriteOperand(Writer& w, const Operand& o) {
  w.U8(static_cast<uint8_t>(o.kind));
  switch (o.kind) {
    case OperandKind::kRegister:
    case OperandKind::kUniform:
      w.U32(o.reg);
      break;
    case OperandKind::kImmediate:
      w.U64(o.imm);
      break;
    case OperandKind::kSpecial:
      w.U8(static_cast<uint8_t>(o.special));
      break;
    case OperandKind::kLabel:
      w.U32(o.label);
      break;
    case OperandKind::kMemory:
      w.U8(static_cast<uint8_t>(o.mem.base_kind));
      w.U32(o.mem.base);
      w.U8(o.mem.has_index);
      w.U8(o.mem.index_signed);
      w.U32(o.mem.index);
      w.U8(o.mem.scale);
      w.U32(static_cast<uint32_t>(o.mem.displacement));
      break;
    case OperandKind::kNone:
      break;
  }
}

bool ReadOperand(Reader& r, Operand& o) {
  const uint8_t kind = r.U8();
  if (kind > static_cast<uint8_t>(OperandKind::kMemory)) return false;
  o.kind = static_cast<OperandKind>(kind);
  switch (o.kind) {
    case OperandKind::kRegister:
    case OperandKind::kUniform:
      o.reg = static_cast<uint16_t>(r.U32());
      break;
    case OperandKind::kImmediate:
      o.imm = r.U64();
      break;
    case OperandKind::kSpecial: {
      const uint8_t sr = r.U8();
      if (sr >= kNumSpecialRegisters) return false;
      o.special = static_cast<SpecialRegister>(sr);
      break;
    }
    case OperandKind::kLabel:
      o.label = r.U32();
      break;
    case OperandKind::kMemory: {
      const uint8_t base_kind = r.U8();
      if (base_kind > static_cast<uint8_t>(OperandKind::kMemory)) return false;
      o.mem.base_kind = static_cast<OperandKind>(base_kind);
      o.mem.base = static_cast<uint16_t>(r.U32());
      o.mem.has_index = r.U8() != 0;
      o.mem.index_signed = r.U8() != 0;
      o.mem.index = static_cast<uint16_t>(r.U32());
      o.mem.scale = r.U8();
      o.mem.displacement = static_cast<int32_t>(r.U32());
      break;
    }
    case OperandKind::kNone:
      break;
  }
  return true;
}

// An argument's uniform, u0..u255 (or -1, none, where `none_allowed`).
// Anything else is damage, refused here: ComputeResources adds to it.
bool ReadUniform(Reader& r, int& out, bool none_allowed) {
  const uint32_t v = r.U32();
  out = static_cast<int>(v);
  return v < static_cast<uint32_t>(kMaxUniforms) || (none_allowed && out == -1);
}

template <typename E>
bool ReadEnum(Reader& r, E& out, int limit) {
  const uint32_t v = r.U8();
  if (v >= static_cast<uint32_t>(limit)) return false;
  out = static_cast<E>(v);
  return true;
}

}  // namespace

std::vector<uint8_t> SerializeModule(const Module& module) {
  Writer w;
  for (char c : kBinaryModuleMagic) w.U8(static_cast<uint8_t>(c));
  w.U32(kBinaryModuleVersion);
  w.U32(static_cast<uint32_t>(module.files.size()));
  for (const std::string& f : module.files) w.String(f);
  w.U32(static_cast<uint32_t>(module.kernels.size()));
  for (const Kernel& k : module.kernels) {
    w.String(k.name);
    w.U32(static_cast<uint32_t>(k.buffers.size()));
    for (const BufferArgument& b : k.buffers) {
      w.U32(static_cast<uint32_t>(b.index));
      w.U32(static_cast<uint32_t>(b.uniform));
      w.U8(static_cast<uint8_t>(b.space));
      w.U8(b.element ? static_cast<uint8_t>(*b.element) + 1 : 0);
      w.String(b.name);
    }
    w.U32(static_cast<uint32_t>(k.threadgroup_arguments.size()));
    for (const ThreadgroupArgument& t : k.threadgroup_arguments) {
      w.U32(static_cast<uint32_t>(t.index));
      w.U32(static_cast<uint32_t>(t.uniform));
      w.String(t.name);
    }
    w.U32(k.static_threadgroup_memory);
    w.U32(k.thread_memory);
    w.U32(k.max_total_threads_per_threadgroup);
    w.U32(static_cast<uint32_t>(k.constant_data_uniform));
    w.U32(static_cast<uint32_t>(k.constant_data.size()));
    w.Bytes(k.constant_data);
    w.U32(static_cast<uint32_t>(k.code.size()));
    for (const Instruction& inst : k.code) {
      w.U32(static_cast<uint32_t>(inst.op));
      w.U8(static_cast<uint8_t>(inst.type));
      w.U8(static_cast<uint8_t>(inst.type2));
      w.U8(static_cast<uint8_t>(inst.space));
      w.U8(inst.vector);
      w.U8(inst.mem_flags);
      w.U8(inst.transpose);
      for (const Operand& o : inst.operands) WriteOperand(w, o);
      w.U32(inst.location.file);
      w.U32(inst.location.line);
      w.U32(inst.location.column);
    }
    w.U32(static_cast<uint32_t>(k.labels.size()));
    for (const auto& [index, name] : k.labels) {
      w.U32(index);
      w.String(name);
    }
  }
  return w.Take();
}

bool IsBinaryModule(std::span<const uint8_t> data) {
  return data.size() >= sizeof(kBinaryModuleMagic) &&
         std::memcmp(data.data(), kBinaryModuleMagic,
                     sizeof(kBinaryModuleMagic)) == 0;
}

bool DeserializeModule(std::span<const uint8_t> data, Module& module,
                       std::string& error) {
  module = Module{};
  if (!IsBinaryModule(data)) {
    error = "not a binary module (bad magic)";
    return false;
  }
  Reader r(data.subspan(sizeof(kBinaryModuleMagic)));
  const uint32_t version = r.U32();
  if (r.ok() && version != kBinaryModuleVersion) {
    error = "binary module version " + std::to_string(version) +
            " is not supported (this mtlemu reads version " +
            std::to_string(kBinaryModuleVersion) + ")";
    return false;
  }
  bool valid = true;
  const uint32_t files = r.Count(4);
  for (uint32_t i = 0; i < files && r.ok(); ++i) {
    module.files.push_back(r.String());
  }
  const uint32_t kernels = r.Count(4);
  for (uint32_t ki = 0; ki < kernels && r.ok() && valid; ++ki) {
    Kernel k;
    k.name = r.String();
    const uint32_t buffers = r.Count(14);
    for (uint32_t i = 0; i < buffers && r.ok() && valid; ++i) {
      BufferArgument b;
      b.index = static_cast<int>(r.U32());
      valid &= ReadUniform(r, b.uniform, /*none_allowed=*/false);
      valid &= ReadEnum(r, b.space, 5);
      const uint8_t element = r.U8();
      if (element > kNumScalarTypes) valid = false;
      if (element) b.element = static_cast<ScalarType>(element - 1);
      b.name = r.String();
      k.buffers.push_back(std::move(b));
    }
    const uint32_t blocks = r.Count(12);
    for (uint32_t i = 0; i < blocks && r.ok(); ++i) {
      ThreadgroupArgument t;
      t.index = static_cast<int>(r.U32());
      valid &= ReadUniform(r, t.uniform, /*none_allowed=*/false);
      t.name = r.String();
      k.threadgroup_arguments.push_back(std::move(t));
    }
    k.static_threadgroup_memory = r.U32();
    k.thread_memory = r.U32();
    k.max_total_threads_per_threadgroup = r.U32();
    valid &= ReadUniform(r, k.constant_data_uniform, /*none_allowed=*/true);
    k.constant_data = r.Bytes();
    const uint32_t code = r.Count(26);
    for (uint32_t i = 0; i < code && r.ok() && valid; ++i) {
      Instruction inst;
      const uint32_t op = r.U32();
      if (op >= static_cast<uint32_t>(kNumOpcodes)) valid = false;
      inst.op = static_cast<Opcode>(op);
      valid &= ReadEnum(r, inst.type, kNumScalarTypes);
      valid &= ReadEnum(r, inst.type2, kNumScalarTypes);
      valid &= ReadEnum(r, inst.space, 5);
      inst.vector = r.U8();
      inst.mem_flags = r.U8();
      inst.transpose = r.U8() != 0;
      for (Operand& o : inst.operands) valid &= ReadOperand(r, o);
      inst.location.file = static_cast<uint16_t>(r.U32());
      inst.location.line = r.U32();
      inst.location.column = r.U32();
      k.code.push_back(inst);
    }
    const uint32_t labels = r.Count(8);
    for (uint32_t i = 0; i < labels && r.ok(); ++i) {
      const uint32_t index = r.U32();
      k.labels[index] = r.String();
    }
    // Resources only of what decoded cleanly: a bad opcode has no table row.
    if (valid && r.ok()) ComputeResources(k);
    module.kernels.push_back(std::move(k));
  }
  if (!r.ok()) {
    error = "binary module is truncated or damaged";
    return false;
  }
  if (!valid) {
    error = "binary module holds an invalid opcode, type, operand or uniform";
    return false;
  }
  if (!r.AtEnd()) {
    error = "binary module has trailing bytes";
    return false;
  }
  return true;
}

}  // namespace mtlemu::isa
