//===- Timeline.cpp - rows of labelled spans as pictures ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/Timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace hetero::timeline {
namespace {

// The SVG's geometry, in pixels.
constexpr double kPlotWidth = 800.0;
constexpr double kRightMargin = 40.0;
constexpr double kRowPitch = 24.0;
constexpr double kBoxHeight = 20.0;
constexpr double kTop = 10.0;
// A rough width of one character of the 11-pixel sans-serif font.
constexpr double kCharacterWidth = 6.5;

/// `text` as the contents of a JSON string.
std::string jsonEscaped(const std::string &text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      escaped += '\\';
      escaped += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof(code), "\\u%04x", c);
      escaped += code;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

/// `text` as XML character data or an attribute value.
std::string xmlEscaped(const std::string &text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    default:
      escaped += c;
    }
  }
  return escaped;
}

/// A tick interval of 1, 2 or 5 times a power of ten that cuts `length`
/// into at most about eight pieces.
double tickInterval(double length) {
  double raw = length / 8.0;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0})
    if (factor * magnitude >= raw)
      return factor * magnitude;
  return 10.0 * magnitude;
}

/// A time in milliseconds as a tick label: "0 ms", "2.5 ms".
std::string tickLabel(double ms) {
  std::ostringstream label;
  label << std::setprecision(6) << ms << " ms";
  return label.str();
}

} // namespace

Span taskSpan(bool forward, int64_t microbatch, double startMs, double endMs) {
  std::string name = forward ? "F" : "B";
  if (microbatch >= 0)
    name += std::to_string(microbatch);
  const char *category = forward ? "forward" : "backward";
  return {startMs, endMs, name, category,
          forward ? kForwardColor : kBackwardColor};
}

Span communicationSpan(const std::string &name, const std::string &category,
                       double startMs, double endMs) {
  Span span{startMs, endMs, name, category, kCommunicationColor};
  span.labelled = false;
  return span;
}

std::vector<Row> rowsOf(const sim::Result &result) {
  std::vector<Row> rows;
  for (size_t r = 0; r < result.computeSpans.size(); ++r) {
    // A rank of one stage is named by it; a rank of several by its number,
    // and its tasks by their stages (PyTorch's `2F0`).
    const std::vector<schedule::Action> &tasks = result.computeTasks[r];
    bool onlyItsStage =
        std::all_of(tasks.begin(), tasks.end(),
                    [&](const auto &task) { return task.stage == int64_t(r); });
    Row row{int64_t(rows.size()),
            (onlyItsStage ? "stage " : "rank ") + std::to_string(r),
            {}};
    for (size_t t = 0; t < result.computeSpans[r].size(); ++t) {
      const schedule::Action &task = tasks[t];
      const sim::Span &span = result.computeSpans[r][t];
      Span drawn = taskSpan(task.kind == schedule::Action::Forward,
                            task.microbatch, span.startMs, span.endMs);
      if (task.kind == schedule::Action::BackwardInput)
        drawn.name[0] = 'I';
      else if (task.kind == schedule::Action::BackwardWeight)
        drawn.name[0] = 'W';
      if (!onlyItsStage)
        drawn.name = std::to_string(task.stage) + drawn.name;
      row.spans.push_back(std::move(drawn));
    }
    rows.push_back(std::move(row));
  }
  for (const sim::Result::Link &link : result.links) {
    std::string name =
        "link " + std::to_string(link.from) + "->" + std::to_string(link.to);
    Row row{int64_t(rows.size()), name, {}};
    for (const sim::Span &span : link.busy)
      row.spans.push_back(
          communicationSpan(name, "transfer", span.startMs, span.endMs));
    rows.push_back(std::move(row));
  }
  return rows;
}

void writeChromeTrace(const std::vector<Row> &rows, std::ostream &os) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3);
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  const char *separator = "";
  for (const Row &row : rows) {
    out << separator << "  {\"name\": \"thread_name\", \"ph\": \"M\", "
        << "\"pid\": 0, \"tid\": " << row.id << ", \"args\": {\"name\": \""
        << jsonEscaped(row.name) << "\"}}";
    separator = ",\n";
  }
  for (const Row &row : rows)
    for (const Span &span : row.spans) {
      out << separator << "  {\"name\": \"" << jsonEscaped(span.name)
          << "\", \"cat\": \"" << jsonEscaped(span.category)
          << "\", \"ph\": \"X\", \"pid\": 0, \"tid\": " << row.id
          << ", \"ts\": " << span.startMs * 1000.0
          << ", \"dur\": " << (span.endMs - span.startMs) * 1000.0 << "}";
      separator = ",\n";
    }
  out << "\n]}\n";
  os << out.str();
}

void writeSvg(const std::vector<Row> &rows, std::ostream &os) {
  double lengthMs = 0.0;
  size_t longestName = 0;
  for (const Row &row : rows) {
    longestName = std::max(longestName, row.name.size());
    for (const Span &span : row.spans)
      lengthMs = std::max(lengthMs, span.endMs);
  }
  if (lengthMs <= 0.0)
    lengthMs = 1.0; // nothing to draw: an axis of 1 ms
  double left = std::max(120.0, 12.0 + kCharacterWidth * double(longestName));
  double scale = kPlotWidth / lengthMs;
  double axis = kTop + kRowPitch * double(rows.size()) + 4.0;
  double width = left + kPlotWidth + kRightMargin;
  double height = axis + 24.0;

  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
      << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    double y = kTop + kRowPitch * double(r);
    out << "  <text x=\"4\" y=\"" << y + 14.0 << "\">"
        << xmlEscaped(rows[r].name) << "</text>\n";
    for (const Span &span : rows[r].spans) {
      double x = left + span.startMs * scale;
      double boxWidth = std::max((span.endMs - span.startMs) * scale, 1.0);
      out << "  <rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << boxWidth
          << "\" height=\"" << kBoxHeight << "\" fill=\"" << span.color
          << "\" stroke=\"white\" stroke-width=\"0.5\">"
          << "<title>" << xmlEscaped(span.name) << ": " << span.startMs << " - "
          << span.endMs << " ms</title></rect>\n";
      if (span.labelled &&
          kCharacterWidth * double(span.name.size()) + 4.0 <= boxWidth)
        out << "  <text x=\"" << x + 2.0 << "\" y=\"" << y + 14.0 << "\">"
            << xmlEscaped(span.name) << "</text>\n";
    }
  }
  out << "  <line x1=\"" << left << "\" y1=\"" << axis << "\" x2=\""
      << left + kPlotWidth << "\" y2=\"" << axis << "\" stroke=\"black\"/>\n";
  double interval = tickInterval(lengthMs);
  for (int64_t tick = 0; double(tick) * interval <= lengthMs * (1 + 1e-9);
       ++tick) {
    double ms = double(tick) * interval;
    double x = left + ms * scale;
    out << "  <line x1=\"" << x << "\" y1=\"" << axis << "\" x2=\"" << x
        << "\" y2=\"" << axis + 4.0 << "\" stroke=\"black\"/>\n"
        << "  <text x=\"" << x << "\" y=\"" << axis + 16.0
        << "\" text-anchor=\"middle\">" << tickLabel(ms) << "</text>\n";
  }
  out << "</svg>\n";
  os << out.str();
}

} // namespace hetero::timeline
