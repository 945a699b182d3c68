// What File > Export DICOM writes: every image shown (truth, both griddings, the
// iterative image) as one MR series each, described by method and parameters.
// Widget-free, so the choice of series and their descriptions are tested directly.
#pragma once

#include "recon/io/dicom_io.hpp"
#include "ui/reconstruction_controller.hpp"

namespace studio {

// The spec refers to the controller's images: use it before they change.
recon::DicomExportSpec dicomExportFor(const ReconstructionController& controller);

}  // namespace studio
