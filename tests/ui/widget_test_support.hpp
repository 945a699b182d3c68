// Mouse helpers for the widget tests: QTest has no wheel, and its mouseMove
// carries no buttons, so these send the events a hand would.
#pragma once

#include <QCoreApplication>
#include <QMouseEvent>
#include <QTest>
#include <QWheelEvent>
#include <QWidget>

namespace studio::testing {

inline void wheel(QWidget* w, QPoint at, int steps, Qt::KeyboardModifiers mods = Qt::NoModifier) {
    QWheelEvent e(QPointF(at), QPointF(w->mapToGlobal(at)), QPoint(), QPoint(0, 120 * steps), Qt::NoButton, mods,
                  Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(w, &e);
}

// A drag with `button` held from `from` to `to` in a few moves, as a hand does it.
inline void drag(QWidget* w, Qt::MouseButton button, QPoint from, QPoint to, Qt::KeyboardModifiers mods = Qt::NoModifier) {
    QTest::mousePress(w, button, mods, from);
    constexpr int kSteps = 4;
    for (int i = 1; i <= kSteps; ++i) {
        const QPointF p = QPointF(from) + (QPointF(to - from) * i) / kSteps;
        QMouseEvent move(QEvent::MouseMove, p, w->mapToGlobal(p), Qt::NoButton, button, mods);
        QCoreApplication::sendEvent(w, &move);
    }
    QTest::mouseRelease(w, button, mods, to);
}

}  // namespace studio::testing
