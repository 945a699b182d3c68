#include "recon/io/output_guard.hpp"

#include <sys/stat.h>

#include "recon/core/errors.hpp"
#include "recon/io/bart_cfl.hpp"
#include "recon/io/file_util.hpp"

namespace recon::io {

std::vector<std::string> filesOfName(const std::string& name) {
    if (name.empty()) return {};
    if (hasExtension(name, {".cfl", ".hdr", ""})) return {cflBase(name) + ".cfl", cflBase(name) + ".hdr"};
    return {name};
}

std::vector<std::string> filesReadBy(const InputSpec& spec) {
    std::vector<std::string> files;
    if (!spec.input.empty()) files.push_back(spec.input);
    for (const std::string* name : {&spec.trajectory, &spec.kspace, &spec.truth, &spec.reference, &spec.density})
        for (const std::string& f : filesOfName(*name)) files.push_back(f);
    return files;
}

bool sameFile(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

void refuseOverwritingInputs(const InputSpec& spec, const std::string& output, const std::string& option) {
    if (hasExtension(output, {".h5", ".hdf5"})) return;  // results are added; the data stay
    for (const std::string& out : filesOfName(output))
        for (const std::string& in : filesReadBy(spec))
            if (sameFile(out, in))
                throw InputError(option + " '" + output + "' would overwrite the input '" + in +
                                 "' (the data this run reads); choose another file. A ReconStudio .h5 output "
                                 "can hold both: written to the .h5 input, it adds the results and keeps the data");
}

}  // namespace recon::io
