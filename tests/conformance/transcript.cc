#include "tests/conformance/transcript.h"

#include <cstdlib>
#include <functional>
#include <regex>
#include <sstream>

#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead::conformance {
namespace {

using nlohmann::json;

bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (!first && c >= '0' && c <= '9');
}

bool IsName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsNameChar(s[i], i == 0)) return false;
  }
  return true;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// ---- Patterns ------------------------------------------------------------------------------

// A pattern type: which characters it may span and what the spanned text must look like.
struct PatternType {
  std::function<bool(char)> allowed;
  std::function<bool(std::string_view)> valid;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

const std::map<std::string, PatternType, std::less<>>& Types() {
  static const auto* types = new std::map<std::string, PatternType, std::less<>>{
      {"*", {[](char) { return true; }, [](std::string_view) { return true; }}},
      {"int",
       {[](char c) { return IsDigit(c) || c == '-'; },
        [](std::string_view s) {
          if (!s.empty() && s[0] == '-') s.remove_prefix(1);
          if (s.empty()) return false;
          for (char c : s) {
            if (!IsDigit(c)) return false;
          }
          return true;
        }}},
      {"num",
       {[](char c) {
          return IsDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
        },
        [](std::string_view s) {
          if (s.empty() || !(IsDigit(s[0]) || s[0] == '-')) return false;
          std::string t(s);
          char* end = nullptr;
          std::strtod(t.c_str(), &end);
          return end == t.c_str() + t.size();
        }}},
      {"hex",
       {[](char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); },
        [](std::string_view s) { return !s.empty(); }}},
      {"time",
       {[](char c) {
          return IsDigit(c) || c == 'T' || c == 'Z' || c == ':' || c == '.' || c == '-' || c == '+';
        },
        [](std::string_view s) {
          static const std::regex re(
              R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d))");
          return s.size() <= 40 && std::regex_match(s.begin(), s.end(), re);
        }}},
      {"word",
       {[](char c) { return c != ' ' && c != '"' && c != '\t' && c != '\r' && c != '\n'; },
        [](std::string_view s) { return !s.empty(); }}},
      {"jid",
       {[](char c) { return c != ' ' && c != '"' && c != '\t' && c != '\r' && c != '\n'; },
        [](std::string_view s) { return s.size() >= 8; }}},
  };
  return *types;
}

struct Segment {
  enum class Kind { kLiteral, kType, kVar } kind;
  std::string text;     // literal text, type name or variable name
  std::string capture;  // kType: variable to bind ("" = none)
};

// Splits a pattern into literals and placeholders. "{...}" is a placeholder only when its inside
// is a known form; any other brace is literal (JSON is full of them).
std::vector<Segment> CompilePattern(std::string_view p) {
  std::vector<Segment> out;
  std::string lit;
  auto flush = [&] {
    if (!lit.empty()) out.push_back({Segment::Kind::kLiteral, lit, ""});
    lit.clear();
  };
  size_t i = 0;
  while (i < p.size()) {
    if (p[i] == '{') {
      size_t close = p.find('}', i + 1);
      if (close != std::string_view::npos) {
        std::string_view inner = p.substr(i + 1, close - i - 1);
        size_t eq = inner.find('=');
        std::string_view type = eq == std::string_view::npos ? inner : inner.substr(eq + 1);
        std::string_view name = eq == std::string_view::npos ? "" : inner.substr(0, eq);
        if (Types().contains(type) && (eq == std::string_view::npos || IsName(name))) {
          flush();
          out.push_back({Segment::Kind::kType, std::string(type), std::string(name)});
          i = close + 1;
          continue;
        }
        if (inner.size() > 1 && inner[0] == '$' && IsName(inner.substr(1))) {
          flush();
          out.push_back({Segment::Kind::kVar, std::string(inner.substr(1)), ""});
          i = close + 1;
          continue;
        }
      }
    }
    lit += p[i++];
  }
  flush();
  return out;
}

// Backtracking match of segments[k..] against actual[pos..]; captures go to *caps.
bool MatchFrom(const std::vector<Segment>& segs, size_t k, std::string_view actual, size_t pos,
               const Vars& vars, Vars* caps, std::string* error) {
  if (k == segs.size()) return pos == actual.size();
  const Segment& s = segs[k];
  if (s.kind == Segment::Kind::kLiteral || s.kind == Segment::Kind::kVar) {
    std::string value = s.text;
    if (s.kind == Segment::Kind::kVar) {
      if (auto it = caps->find(s.text); it != caps->end()) {
        value = it->second;
      } else if (auto v = vars.find(s.text); v != vars.end()) {
        value = v->second;
      } else {
        *error = "variable {$" + s.text + "} is not bound";
        return false;
      }
    }
    if (actual.substr(pos).substr(0, value.size()) != value) return false;
    return MatchFrom(segs, k + 1, actual, pos + value.size(), vars, caps, error);
  }
  const PatternType& type = Types().find(s.text)->second;
  size_t end = pos;
  while (end < actual.size() && type.allowed(actual[end])) ++end;
  // Longest span first, except for {*}: shortest first, so "{*}x{*}" reads naturally.
  bool lazy = s.text == "*";
  size_t n = end - pos;
  for (size_t j = 0; j <= n; ++j) {
    size_t len = lazy ? j : n - j;
    std::string_view cand = actual.substr(pos, len);
    if (!type.valid(cand)) continue;
    Vars saved = *caps;
    if (!s.capture.empty()) (*caps)[s.capture] = std::string(cand);
    if (MatchFrom(segs, k + 1, actual, pos + len, vars, caps, error)) return true;
    *caps = std::move(saved);
    if (!error->empty()) return false;
  }
  return false;
}

// ---- JSON subset --------------------------------------------------------------------------

std::string Short(const json& v) {
  std::string s = DumpJson(v);
  return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

// Expected ⊆ actual: objects need the expected keys (a value "{absent}": the key must be missing),
// arrays the same length, strings are patterns (matched against the JSON text of a non-string).
bool JsonSubset(const json& exp, const json& act, const std::string& path, Vars* vars,
                std::string* why) {
  if (exp.is_object()) {
    if (!act.is_object()) {
      *why = "at " + path + ": expected an object, got " + Short(act);
      return false;
    }
    for (const auto& [key, value] : exp.items()) {
      std::string sub = path.empty() ? key : path + "." + key;
      auto it = act.find(key);
      if (value.is_string() && value.get<std::string>() == "{absent}") {
        if (it != act.end()) {
          *why = "at " + sub + ": expected the key to be absent, got " + Short(*it);
          return false;
        }
        continue;
      }
      if (it == act.end()) {
        *why = "at " + sub + ": key missing";
        return false;
      }
      if (!JsonSubset(value, *it, sub, vars, why)) return false;
    }
    return true;
  }
  if (exp.is_array()) {
    if (!act.is_array() || act.size() != exp.size()) {
      *why = "at " + path + ": expected " + Short(exp) + ", got " + Short(act);
      return false;
    }
    for (size_t i = 0; i < exp.size(); ++i) {
      if (!JsonSubset(exp[i], act[i], path + "[" + std::to_string(i) + "]", vars, why)) {
        return false;
      }
    }
    return true;
  }
  if (exp.is_string()) {
    std::string target = act.is_string() ? act.get<std::string>() : DumpJson(act);
    std::string pattern = exp.get<std::string>();
    // A plain string (no placeholder) must match a string, not the JSON text of a number.
    bool has_placeholder = CompilePattern(pattern).size() != 1 ||
                           CompilePattern(pattern)[0].kind != Segment::Kind::kLiteral;
    std::string error;
    if ((act.is_string() || has_placeholder) && MatchPattern(pattern, target, vars, &error)) {
      return true;
    }
    *why = "at " + path + ": expected " + Short(exp) + ", got " + Short(act) +
           (error.empty() ? "" : " (" + error + ")");
    return false;
  }
  // Numbers: by value (25 == 25.0); booleans and null exactly.
  bool same =
      exp.is_number() && act.is_number() ? exp.get<double>() == act.get<double>() : exp == act;
  if (!same) *why = "at " + path + ": expected " + Short(exp) + ", got " + Short(act);
  return same;
}

}  // namespace

std::string Reply::Render() const {
  if (type == 0) return text.empty() ? "(nothing)" : text;
  if (type == '$') return null ? "$-1" : "$ " + text;
  return std::string(1, type) + text;
}

bool MatchPattern(std::string_view pattern, std::string_view actual, Vars* vars,
                  std::string* error) {
  std::vector<Segment> segs = CompilePattern(pattern);
  Vars caps;
  error->clear();
  if (!MatchFrom(segs, 0, actual, 0, *vars, &caps, error)) return false;
  for (auto& [k, v] : caps) (*vars)[k] = std::move(v);
  return true;
}

bool MatchReply(std::string_view expected, const Reply& actual, Vars* vars, std::string* why) {
  std::string error;
  if (expected.starts_with("$json ")) {
    if (actual.type != '$' || actual.null) {
      *why = "expected a bulk JSON reply";
      return false;
    }
    json exp;
    try {
      exp = json::parse(expected.substr(6));
    } catch (const std::exception& e) {
      *why = std::string("the expected line is not JSON: ") + e.what();
      return false;
    }
    auto act = ParseJson(actual.text, 1000);
    if (!act.ok()) {
      *why = "the reply is not JSON: " + act.status().message();
      return false;
    }
    return JsonSubset(exp, *act, "", vars, why);
  }
  if (expected.starts_with("~")) {
    std::string rendered = actual.Render();
    try {
      std::regex re{std::string(expected.substr(1))};
      if (std::regex_match(rendered, re)) return true;
    } catch (const std::regex_error& e) {
      *why = std::string("bad regex: ") + e.what();
      return false;
    }
    *why = "no match for the regex";
    return false;
  }
  if (actual.type == 0) {
    *why = "no reply";
    return false;
  }
  if (MatchPattern(expected, actual.Render(), vars, &error)) return true;
  *why = error;
  return false;
}

Result<std::string> ExpandSend(std::string_view text, const Vars& vars, TimePoint now) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '{') {
      out += text[i++];
      continue;
    }
    std::string_view rest = text.substr(i + 1);
    if (rest.starts_with("repeat ")) {
      size_t p = 7;
      size_t digits = p;
      while (digits < rest.size() && IsDigit(rest[digits])) ++digits;
      if (digits > p && digits < rest.size() && rest[digits] == ' ') {
        int64_t n = std::strtoll(std::string(rest.substr(p, digits - p)).c_str(), nullptr, 10);
        std::string unit;
        size_t j = digits + 1;
        while (j < rest.size() && rest[j] != '}') {
          if (rest[j] == '\\' && j + 1 < rest.size()) ++j;
          unit += rest[j++];
        }
        if (j < rest.size()) {
          for (int64_t k = 0; k < n; ++k) out += unit;
          i += 1 + j + 1;
          continue;
        }
      }
    }
    size_t close = rest.find('}');
    if (close != std::string_view::npos) {
      std::string_view inner = rest.substr(0, close);
      if (inner.size() > 1 && inner[0] == '$' && IsName(inner.substr(1))) {
        auto it = vars.find(std::string(inner.substr(1)));
        if (it == vars.end()) {
          return Status::InvalidArgument("variable {" + std::string(inner) + "} is not bound");
        }
        out += it->second;
        i += close + 2;
        continue;
      }
      if (inner == "time" || inner.starts_with("time+") || inner.starts_with("time-")) {
        int64_t secs = 0;
        if (inner.size() > 4) {
          std::string num(inner.substr(5));
          char* end = nullptr;
          secs = std::strtoll(num.c_str(), &end, 10);
          if (num.empty() || *end != '\0') {
            return Status::InvalidArgument("bad time offset {" + std::string(inner) + "}");
          }
          if (inner[4] == '-') secs = -secs;
        }
        out += FormatRfc3339(now + std::chrono::seconds(secs));
        i += close + 2;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

Result<std::string> DecodeEscapes(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) return Status::InvalidArgument("a lone backslash at the end");
    switch (text[i]) {
      case 'r':
        out += '\r';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case '\\':
        out += '\\';
        break;
      case 'x': {
        if (i + 2 >= text.size()) return Status::InvalidArgument("\\x needs two hex digits");
        std::string hex(text.substr(i + 1, 2));
        char* end = nullptr;
        long v = std::strtol(hex.c_str(), &end, 16);
        if (hex.size() != 2 || *end != '\0')
          return Status::InvalidArgument("\\x needs two hex digits");
        out += static_cast<char>(v);
        i += 2;
        break;
      }
      default:
        return Status::InvalidArgument(std::string("unknown escape \\") + text[i]);
    }
  }
  return out;
}

Result<Transcript> ParseTranscript(const std::string& path, std::string_view text) {
  Transcript t;
  t.path = path;
  std::istringstream in{std::string(text)};
  std::string raw;
  int line_no = 0;
  bool started = false;  // a connection or exchange was seen: no more configuration
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(path + ":" + std::to_string(line_no) + ": " + why);
  };
  while (std::getline(in, raw)) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    std::string trimmed = Trim(raw);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    Step step;
    step.line = line_no;
    if (raw.starts_with(">raw ")) {
      step.kind = Step::Kind::kSendRaw;
      auto decoded = DecodeEscapes(raw.substr(5));
      if (!decoded.ok()) return bad(decoded.status().message());
      step.text = raw.substr(5);  // decoded after {…} expansion, when run
    } else if (raw.starts_with("> ")) {
      step.kind = Step::Kind::kSend;
      step.text = raw.substr(2);
    } else if (raw.starts_with("< ")) {
      step.kind = Step::Kind::kExpect;
      step.text = raw.substr(2);
    } else if (raw.starts_with("! ")) {
      std::istringstream words(raw.substr(2));
      std::string directive;
      words >> directive;
      std::string rest = Trim(raw.substr(2 + directive.size()));
      if (directive == "config" || directive == "store") {
        if (started) return bad("! " + directive + " must come before the first connection");
        if (directive == "store") {
          if (rest != "memory" && rest != "sqlite") return bad("! store memory or ! store sqlite");
          t.store = rest;
        } else {
          if (rest.find('=') == std::string::npos) return bad("! config KEY = VALUE (TOML)");
          t.config_lines.push_back(rest);
        }
        continue;
      }
      started = true;
      if (directive == "connect") {
        step.kind = Step::Kind::kConnect;
        step.text = rest;
      } else if (directive == "use") {
        if (rest.empty()) return bad("! use NAME");
        step.kind = Step::Kind::kUse;
        step.text = rest;
      } else if (directive == "hello") {
        step.kind = Step::Kind::kHello;
        std::string kv;
        while (words >> kv) {
          size_t eq = kv.find('=');
          if (eq == std::string::npos) return bad("! hello takes key=value options, not " + kv);
          std::string key = kv.substr(0, eq);
          if (key != "wid" && key != "password" && key != "v") {
            return bad("! hello options are wid=, password= and v=");
          }
          step.options[key] = kv.substr(eq + 1);
        }
      } else if (directive == "close") {
        step.kind = Step::Kind::kClose;
      } else if (directive == "wait-closed") {
        step.kind = Step::Kind::kWaitClosed;
      } else if (directive == "elapsed" || directive == "sleep" || directive == "advance") {
        step.kind = directive == "sleep"     ? Step::Kind::kSleep
                    : directive == "advance" ? Step::Kind::kAdvance
                                             : Step::Kind::kElapsed;
        size_t dots = rest.find("..");
        char* end = nullptr;
        if (directive != "elapsed") {
          step.lo = std::strtoll(rest.c_str(), &end, 10);
          if (rest.empty() || *end != '\0' || step.lo < 0) {
            return bad("! " + directive + " MILLISECONDS");
          }
        } else {
          if (dots == std::string::npos) return bad("! elapsed LO..HI (milliseconds)");
          std::string lo = rest.substr(0, dots), hi = rest.substr(dots + 2);
          step.lo = std::strtoll(lo.c_str(), &end, 10);
          if (lo.empty() || *end != '\0') return bad("! elapsed LO..HI (milliseconds)");
          step.hi = std::strtoll(hi.c_str(), &end, 10);
          if (hi.empty() || *end != '\0') return bad("! elapsed LO..HI (milliseconds)");
        }
      } else {
        return bad("unknown directive ! " + directive);
      }
    } else {
      return bad("a line must start with '> ', '>raw ', '< ', '! ' or '#'");
    }
    if (step.kind == Step::Kind::kSend || step.kind == Step::Kind::kSendRaw ||
        step.kind == Step::Kind::kExpect) {
      started = true;
    }
    t.steps.push_back(std::move(step));
  }
  return t;
}

}  // namespace bulkhead::conformance
