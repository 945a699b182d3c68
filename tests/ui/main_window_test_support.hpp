// The main window as the window-level tests and the docs' screenshots use it.
#pragma once

#include <QSize>
#include <memory>

#include "ui/main_window.hpp"

namespace studio::testing {

// Shown at `size`, without the 3D tab (no OpenGL needed) and without the user's saved settings,
// so that a picture is the same on every machine. Callers wait with QTest::qWaitForWindowExposed.
inline std::unique_ptr<MainWindow> showMainWindow(QSize size) {
    MainWindowOptions o;
    o.enable_3d = false;
    o.persist_settings = false;
    auto w = std::make_unique<MainWindow>(o);
    w->resize(size);
    w->show();
    return w;
}

}  // namespace studio::testing
