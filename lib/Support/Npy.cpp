//===- Npy.cpp - NumPy .npy files of float32 and int64 arrays -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Support/Npy.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace hetero::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += std::to_string(shape[i]) + (shape.size() == 1 ? "," : "") +
            (i + 1 < shape.size() ? ", " : "");
  return text + ")";
}

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

const char *descr(Dtype dtype) {
  return dtype == Dtype::Float32 ? "<f4" : "<i8";
}

size_t elementBytes(Dtype dtype) { return dtype == Dtype::Float32 ? 4 : 8; }

} // namespace

std::string header(const std::vector<int64_t> &shape, Dtype dtype) {
  std::string dictionary =
      std::string("{'descr': '") + descr(dtype) +
      "', 'fortran_order': False, 'shape': " + shapeText(shape) + ", }";
  // magic (6) + version (2) + length (2) + dictionary + padding + '\n'.
  size_t unpadded = kMagicSize + 4 + dictionary.size() + 1;
  dictionary.append((64 - unpadded % 64) % 64, ' ');
  dictionary += '\n';
  std::string result(kMagic, kMagicSize);
  result += '\x01';
  result += '\x00';
  result += char(dictionary.size() & 0xff);
  result += char((dictionary.size() >> 8) & 0xff);
  return result + dictionary;
}

std::string write(const std::string &path, const std::vector<int64_t> &shape,
                  const void *data, Dtype dtype) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file)
    return "cannot open " + path + " for writing: " + std::strerror(errno);
  std::string head = header(shape, dtype);
  file.write(head.data(), std::streamsize(head.size()));
  // The host is little-endian (x86-64, AArch64), as '<f4' and '<i8' state.
  file.write(
      static_cast<const char *>(data),
      std::streamsize(size_t(elementCount(shape)) * elementBytes(dtype)));
  file.close();
  if (!file)
    return "cannot write " + path + ": " + std::strerror(errno);
  return "";
}

namespace {

/// Reads the header of `path` from `file`: the array's dtype and shape.
/// Returns "" or what is wrong with the file.
std::string readHeader(std::ifstream &file, const std::string &path,
                       Dtype &dtype, std::vector<int64_t> &shape) {
  if (!file)
    return "cannot open " + path + ": " + std::strerror(errno);
  char prefix[10];
  if (!file.read(prefix, sizeof(prefix)) ||
      std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return path + " is not a NumPy .npy file (no \\x93NUMPY magic)";
  if (prefix[6] != 1)
    return path + " is NumPy format " + std::to_string(int(prefix[6])) +
           ".x; expected 1.0";
  size_t length = size_t(uint8_t(prefix[8])) | size_t(uint8_t(prefix[9])) << 8;
  std::string dictionary(length, '\0');
  if (!file.read(dictionary.data(), std::streamsize(length)))
    return path + ": the header is cut short";
  std::smatch match;
  if (!std::regex_search(dictionary, match,
                         std::regex("'descr'\\s*:\\s*'([^']*)'")) ||
      (match[1] != descr(Dtype::Float32) && match[1] != descr(Dtype::Int64)))
    return path + " holds " +
           (match.empty() ? std::string("no dtype")
                          : "dtype " + match[1].str()) +
           ", expected little-endian float32 ('<f4') or int64 ('<i8')";
  dtype = match[1] == descr(Dtype::Float32) ? Dtype::Float32 : Dtype::Int64;
  if (!std::regex_search(dictionary, match,
                         std::regex("'fortran_order'\\s*:\\s*False")))
    return path + " is in Fortran order, expected C order";
  if (!std::regex_search(dictionary, match,
                         std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    return path + ": the header states no shape";
  shape.clear();
  std::stringstream extents(match[1].str());
  for (std::string item; std::getline(extents, item, ',');) {
    if (item.find_first_not_of(" ") == std::string::npos)
      continue;
    char *end = nullptr;
    long long extent = std::strtoll(item.c_str(), &end, 10);
    if (end == item.c_str() || extent < 0 ||
        std::string(end).find_first_not_of(" L") != std::string::npos)
      return path + ": the header's shape (" + match[1].str() +
             ") is not a tuple of sizes";
    shape.push_back(extent);
  }
  return "";
}

/// Reads the data of an array of `shape` and `dtype` after its header.
std::string readData(std::ifstream &file, const std::string &path,
                     const std::vector<int64_t> &shape, Dtype dtype,
                     void *data) {
  std::streamsize bytes =
      std::streamsize(size_t(elementCount(shape)) * elementBytes(dtype));
  if (!file.read(static_cast<char *>(data), bytes))
    return path + ": the data is cut short (expected " + std::to_string(bytes) +
           " bytes)";
  if (file.peek() != std::char_traits<char>::eof())
    return path + ": trailing bytes after the array";
  return "";
}

} // namespace

std::string read(const std::string &path, const std::vector<int64_t> &shape,
                 void *data, Dtype dtype) {
  std::ifstream file(path, std::ios::binary);
  Dtype found;
  std::vector<int64_t> foundShape;
  if (std::string error = readHeader(file, path, found, foundShape);
      !error.empty())
    return error;
  if (found != dtype)
    return path + " holds dtype " + descr(found) + ", expected little-endian " +
           (dtype == Dtype::Float32 ? "float32" : "int64") + " ('" +
           descr(dtype) + "')";
  if (foundShape != shape)
    return path + " holds an array of shape " + shapeText(foundShape) +
           ", expected " + shapeText(shape);
  return readData(file, path, shape, dtype, data);
}

std::string read(const std::string &path, Array &array) {
  std::ifstream file(path, std::ios::binary);
  if (std::string error = readHeader(file, path, array.dtype, array.shape);
      !error.empty())
    return error;
  size_t count = size_t(elementCount(array.shape));
  if (array.dtype == Dtype::Float32) {
    array.floats.resize(count);
    array.ints.clear();
    return readData(file, path, array.shape, array.dtype, array.floats.data());
  }
  array.ints.resize(count);
  array.floats.clear();
  return readData(file, path, array.shape, array.dtype, array.ints.data());
}

} // namespace hetero::npy
