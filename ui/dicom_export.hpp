// What File > Export DICOM writes: every image shown (truth, both griddings, the
// iterative image, a pinned snapshot) as one MR series each, described by method and parameters.
// Widget-free, so the choice of series and their descriptions are tested directly.
#pragma once

#include "recon/io/dicom_io.hpp"
#include "ui/pinned_snapshot.hpp"
#include "ui/reconstruction_controller.hpp"

namespace studio {

// The spec refers to the controller's images: use it before they change.
// `pin`: the pinned snapshot, exported as one more series (with how it was made).
recon::DicomExportSpec dicomExportFor(const ReconstructionController& controller,
                                      const PinnedSnapshot* pin = nullptr);

}  // namespace studio
