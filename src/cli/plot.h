// The plots of `mrc --plot` and `size --plot`: a script of the Python package (python/kvpolicy/)
// run through /usr/bin/python3 and Debian's matplotlib.
#pragma once

#include <string>

namespace kvpolicy::cli {

// Runs /usr/bin/python3 SCRIPT JSON PNG, where SCRIPT (plot_mrc.py, plot_size.py) is found in
// $KVPOLICY_SCRIPTS, else beside this executable in its build tree (python/kvpolicy/) or where
// `cmake --install` put it; throws with what to install.
void run_plot_script(const std::string& script_name, const std::string& json,
                     const std::string& png);

}  // namespace kvpolicy::cli
