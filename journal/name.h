#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace jackpot {

// Text that configuration names and that answers and records repeat many times a second:
// paytable ids, paytable row labels, level names. Each distinct text is kept once, for the life
// of the process, so a Name is one pointer: copying it allocates nothing and equal names compare
// by address. Making a Name from text looks it up under a lock, so make them when configuration
// loads or a stored answer is decoded, never per command.
//
// Only text that configuration or the journal holds becomes a Name: requests from tables keep
// their own strings, so that no caller can grow the table of names.
class Name {
 public:
  Name();  // The empty name.
  // Explicit from run-time text, so that no string becomes a Name by accident; implicit from a
  // literal, which the program itself bounds.
  explicit Name(std::string_view text);
  explicit Name(const std::string& text) : Name(std::string_view(text)) {}
  Name(const char* text) : Name(std::string_view(text)) {}  // NOLINT: literals.

  const std::string& str() const { return *text_; }
  operator const std::string&() const { return *text_; }  // NOLINT
  std::string_view view() const { return *text_; }
  const char* data() const { return text_->data(); }
  std::size_t size() const { return text_->size(); }
  bool empty() const { return text_->empty(); }

  friend bool operator==(const Name& a, const Name& b) { return a.text_ == b.text_; }
  friend bool operator==(const Name& a, const std::string& b) { return *a.text_ == b; }
  friend bool operator==(const Name& a, std::string_view b) { return *a.text_ == b; }
  friend bool operator==(const Name& a, const char* b) { return *a.text_ == b; }
  // Concatenation, as with std::string, for messages.
  friend std::string operator+(std::string a, const Name& b) { return a.append(*b.text_); }
  friend std::string operator+(const char* a, const Name& b) { return a + *b.text_; }
  friend std::string operator+(const Name& a, const std::string& b) { return *a.text_ + b; }
  friend std::string operator+(const Name& a, const char* b) { return *a.text_ + b; }
  friend std::strong_ordering operator<=>(const Name& a, const Name& b) {
    return a.text_ == b.text_ ? std::strong_ordering::equal : *a.text_ <=> *b.text_;
  }

 private:
  const std::string* text_;
};

std::ostream& operator<<(std::ostream& out, const Name& name);

}  // namespace jackpot

template <>
struct std::hash<jackpot::Name> {
  std::size_t operator()(const jackpot::Name& name) const noexcept {
    return std::hash<std::string_view>{}(name.view());
  }
};
