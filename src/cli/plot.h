// The plots of `mrc --plot` and `size --plot`: a script of the Python package (python/kvpolicy/)
// run through /usr/bin/python3 and Debian's matplotlib.
#pragma once

#include <string>
#include <vector>

namespace kvpolicy::cli {

// Runs /usr/bin/python3 SCRIPT JSON PNG, where SCRIPT (plot_mrc.py, plot_size.py) is found in
// $KVPOLICY_SCRIPTS, else beside this executable in its build tree (python/kvpolicy/) or where
// `cmake --install` put it; throws with what to install.
void run_plot_script(const std::string& script_name, const std::string& json,
                     const std::string& png);

// Writes `rows` (JSON lines) to `json_path` when given, and when `plot_path` is given draws them
// with `script_name`: from json_path, or from a temporary file removed afterwards.
void write_rows_and_plot(const std::vector<std::string>& rows, const std::string& json_path,
                         const std::string& plot_path, const std::string& script_name);

}  // namespace kvpolicy::cli
