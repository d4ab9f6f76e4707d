#include "api/triton_print.h"

#include <vector>

namespace mtlemu::api {

using triton::lower::kPrintLogHeaderWords;
using triton::lower::kPrintRecordWords;

Result<std::shared_ptr<Buffer>> newPrintLog(Device& device, uint32_t records) {
  std::vector<uint32_t> words(
      kPrintLogHeaderWords + uint64_t{records} * kPrintRecordWords, 0);
  words[1] = records;
  return device.newBuffer(words.data(), words.size() * sizeof(uint32_t));
}

triton::lower::PrintedLines PrintedLines(const TritonKernel& kernel,
                                         const Buffer& log) {
  return triton::lower::DecodePrintLog(
      kernel.prints, static_cast<const uint32_t*>(log.contents()),
      log.length() / sizeof(uint32_t));
}

}  // namespace mtlemu::api
