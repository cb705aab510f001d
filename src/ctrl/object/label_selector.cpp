// SPDX-License-Identifier: Apache-2.0
#include "ctrl/object/label_selector.h"

#include <algorithm>

#include "kube/core/text.h"

namespace ctrl {
namespace {

// Splits at commas outside parentheses: "a in (x,y),b" is two terms.
std::vector<std::string_view> terms_of(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(kube::trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

bool valid_key(std::string_view key) {
  return !key.empty() && key.find_first_of(" \t=!(),") == std::string_view::npos;
}

// "(a, b)" -> {"a", "b"}; nullopt without the parentheses.
std::optional<std::vector<std::string>> value_set(std::string_view text) {
  text = kube::trim(text);
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return std::nullopt;
  std::vector<std::string> values;
  std::string_view inner = text.substr(1, text.size() - 2);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= inner.size(); ++i) {
    if (i == inner.size() || inner[i] == ',') {
      values.emplace_back(kube::trim(inner.substr(start, i - start)));
      start = i + 1;
    }
  }
  return values;
}

}  // namespace

std::optional<LabelSelector> LabelSelector::parse(std::string_view text) {
  LabelSelector selector;
  if (kube::trim(text).empty()) return selector;
  for (std::string_view term : terms_of(text)) {
    Term t;
    if (term.empty()) return std::nullopt;
    // Set-based: "key in (...)", "key notin (...)".
    const auto space = term.find_first_of(" \t");
    if (space != std::string_view::npos && term.find('=') == std::string_view::npos) {
      std::string_view rest = kube::trim(term.substr(space));
      std::optional<std::vector<std::string>> values;
      if (rest.starts_with("notin")) {
        t.op = Term::Op::not_in;
        values = value_set(rest.substr(5));
      } else if (rest.starts_with("in")) {
        t.op = Term::Op::in;
        values = value_set(rest.substr(2));
      }
      if (!values) return std::nullopt;
      t.key = std::string(term.substr(0, space));
      t.values = std::move(*values);
    } else if (term.front() == '!') {
      t.op = Term::Op::not_exists;
      t.key = std::string(kube::trim(term.substr(1)));
    } else if (auto at = term.find("!="); at != std::string_view::npos) {
      t.op = Term::Op::not_equals;
      t.key = std::string(kube::trim(term.substr(0, at)));
      t.values.emplace_back(kube::trim(term.substr(at + 2)));
    } else if (auto eq = term.find('='); eq != std::string_view::npos) {
      const std::size_t skip = term.substr(eq).starts_with("==") ? 2 : 1;
      t.op = Term::Op::equals;
      t.key = std::string(kube::trim(term.substr(0, eq)));
      t.values.emplace_back(kube::trim(term.substr(eq + skip)));
    } else {
      t.key = std::string(term);
    }
    if (!valid_key(t.key)) return std::nullopt;
    selector.terms_.push_back(std::move(t));
  }
  return selector;
}

bool LabelSelector::matches(const rapidjson::Value& object) const {
  const rapidjson::Value* labels = nullptr;
  if (object.IsObject()) {
    auto metadata = object.FindMember("metadata");
    if (metadata != object.MemberEnd() && metadata->value.IsObject()) {
      auto found = metadata->value.FindMember("labels");
      if (found != metadata->value.MemberEnd() && found->value.IsObject()) labels = &found->value;
    }
  }
  for (const auto& t : terms_) {
    std::optional<std::string_view> value;
    if (labels) {
      auto it = labels->FindMember(t.key.c_str());
      if (it != labels->MemberEnd() && it->value.IsString()) {
        value = std::string_view(it->value.GetString(), it->value.GetStringLength());
      }
    }
    const bool listed =
        value && std::find(t.values.begin(), t.values.end(), *value) != t.values.end();
    bool ok = false;
    switch (t.op) {
      case Term::Op::exists:
        ok = value.has_value();
        break;
      case Term::Op::not_exists:
        ok = !value;
        break;
      case Term::Op::equals:
      case Term::Op::in:
        ok = listed;
        break;
      // As apimachinery: a missing label satisfies != and notin.
      case Term::Op::not_equals:
      case Term::Op::not_in:
        ok = !listed;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace ctrl
