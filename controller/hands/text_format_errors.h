#pragma once

#include <google/protobuf/io/tokenizer.h>

#include <string>

namespace jackpot {

// Keeps the first syntax error of a Protobuf text-format parse as "line:column: message"
// (1-based), for the configuration loaders' file:line errors.
class FirstTextFormatError final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (message_.empty()) {
      message_ = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    }
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

}  // namespace jackpot
