// kvpolicy_fuzz_seeds DIR: writes every target's seeds to DIR/TARGET/ (the corpus `make fuzz`
// starts from); --list prints the targets, a line each: name, tab, what it covers.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "fuzz_targets.h"

int main(int argc, char** argv) {
  using kvpolicy::fuzz::fuzz_targets;
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " DIR | --list\n";
    return 2;
  }
  std::string arg = argv[1];
  if (arg == "--list") {
    for (const auto& t : fuzz_targets()) std::cout << t.name << '\t' << t.covers << '\n';
    return 0;
  }
  for (const auto& t : fuzz_targets()) {
    std::filesystem::path dir = std::filesystem::path(arg) / t.name;
    std::filesystem::create_directories(dir);
    for (const auto& seed : t.seeds()) {
      std::ofstream out(dir / ("seed-" + seed.name), std::ios::binary);
      out << seed.bytes;
      if (!out.flush()) {
        std::cerr << "cannot write " << (dir / seed.name).string() << '\n';
        return 1;
      }
    }
  }
  return 0;
}
