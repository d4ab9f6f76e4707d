#include "cli/kernel_file.h"

#include <filesystem>
#include <fstream>
#include <span>

#include "api/library.h"
#include "isa/binary_module.h"

namespace mtlemu::cli {

Result<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Error{path + ": is a directory"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file"};
  // In pieces, up to a bound: a device (/dev/zero) or a pipe never ends.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) {
      return Error{path + ": more than " +
                   std::to_string(kMaxInputFileBytes >> 20) +
                   " MiB; not a kernel file"};
    }
  }
  if (in.bad()) return Error{path + ": read error"};
  return text;
}

Result<std::shared_ptr<Library>> LoadLibrary(
    Device& device, const std::string& path, const std::string& kernel,
    const msl::CompileOptions& options) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.error();
  const std::string& data = text.value();
  const std::span<const uint8_t> bytes(
      reinterpret_cast<const uint8_t*>(data.data()), data.size());
  if (isa::IsBinaryModule(bytes)) {
    isa::Module module;
    std::string error;
    if (!isa::DeserializeModule(bytes, module, error)) {
      return Error{path + ": " + error};
    }
    return device.newLibraryWithModule(std::move(module));
  }
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".s" || ext == ".isa" || ext == ".asm") {
    return device.newLibraryWithISA(data, path);
  }
  if (ext == ".metal") {
    // The second run of the same source skips compilation (the cache).
    return api::newLibraryWithSource(
        device, data, options, path,
        kernel.empty() ? std::vector<std::string>{} : std::vector{kernel});
  }
  return Error{
      path + ": unsupported kernel file type '" + ext +
      "' (expected .metal, ISA text (.s, .isa, .asm) or a binary module "
      "from 'mtlemu asm -o')"};
}

}  // namespace mtlemu::cli
