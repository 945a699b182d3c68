// The window's choices survive a restart through QSettings (MainWindow::storeSettings /
// restoreSettings): the multi-coil ones (coil combination, coil-map method, virtual coils) set in
// the tune panel as a user does, the window closed, a new window made. Settings live in a
// temporary folder under a test organisation, so the user's own are never read or written.
#include <QComboBox>
#include <QCoreApplication>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "ui/data_panel.hpp"
#include "ui/main_window.hpp"
#include "ui/tune_panel.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using namespace studio::testing;

namespace {

bool finished(const ReconstructionController& c) { return !isActive(c.state()) && c.state() != JobState::Idle; }

MainWindowOptions persisted() {
    MainWindowOptions o;
    o.enable_3d = false;  // no OpenGL on the offscreen platform
    o.persist_settings = true;
    return o;
}

// Few iterations on the CPU: the test checks settings, not solves.
void quickSolves(MainWindow& w) {
    ReconSettings s = w.controller()->settings();
    s.iterations = 3;
    s.backend = recon::BackendChoice::Cpu;
    w.controller()->setSettings(s);
    w.controller()->setDebounceInterval(10);
}

const QString kEightCoils = QStringLiteral("radial-2d-8coil");

}  // namespace

class TestSettingsPersistence : public QObject {
    Q_OBJECT
    QTemporaryDir config_;

private slots:
    void initTestCase() {
        QVERIFY(config_.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("reconstudio-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("test_settings_persistence"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config_.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, config_.path());
        QVERIFY(QSettings().fileName().startsWith(config_.path()));
        QSettings().clear();
    }

    void multiCoilChoicesComeBackInANewWindow() {
        {
            auto w = std::make_unique<MainWindow>(persisted());
            // A first run: the engine's defaults.
            const ReconSettings defaults;
            QVERIFY(w->controller()->settings().coil_combination == defaults.coil_combination);
            QVERIFY(w->controller()->settings().coil_maps == defaults.coil_maps);
            QCOMPARE(w->controller()->settings().virtual_coils, 0);
            QVERIFY(w->controller()->settings().weighting == defaults.weighting);
            quickSolves(*w);
            w->openDemo(kEightCoils);
            QTRY_VERIFY_WITH_TIMEOUT(finished(*w->controller()), kSolveTimeoutMs);
            // Chosen as a user does, in the tune panel.
            TunePanel* tune = w->tunePanel();
            tune->coilCombinationBox()->setCurrentIndex(tune->coilCombinationBox()->findData(int(recon::CoilCombination::Sense)));
            tune->coilMapsBox()->setCurrentIndex(tune->coilMapsBox()->findData(int(recon::CoilMapMethod::Walsh)));
            tune->virtualCoilsBox()->setValue(4);
            tune->dataTermBox()->setCurrentIndex(tune->dataTermBox()->findData(int(recon::DataWeighting::Density)));
            QVERIFY(w->controller()->settings().weighting == recon::DataWeighting::Density);
            QVERIFY(w->controller()->settings().coil_combination == recon::CoilCombination::Sense);
            QVERIFY(w->controller()->settings().coil_maps == recon::CoilMapMethod::Walsh);
            QCOMPARE(w->controller()->settings().virtual_coils, 4);
            QVERIFY(w->close());  // closeEvent stores the settings (and cancels the re-solve they started)
        }
        {
            const QSettings s;
            QCOMPARE(s.value("recon/coil_combination").toString(), QStringLiteral("sense"));
            QCOMPARE(s.value("recon/coil_maps").toString(), QStringLiteral("walsh"));
            QCOMPARE(s.value("recon/virtual_coils").toInt(), 4);
            QCOMPARE(s.value("recon/data_weighting").toString(), QStringLiteral("density"));
        }

        MainWindow w(persisted());
        const ReconSettings& r = w.controller()->settings();
        QVERIFY(r.coil_combination == recon::CoilCombination::Sense);
        QVERIFY(r.coil_maps == recon::CoilMapMethod::Walsh);
        QCOMPARE(r.virtual_coils, 4);
        QVERIFY(r.weighting == recon::DataWeighting::Density);
        TunePanel* tune = w.tunePanel();
        QCOMPARE(tune->dataTermBox()->currentData().toInt(), int(recon::DataWeighting::Density));
        QCOMPARE(tune->coilCombinationBox()->currentData().toInt(), int(recon::CoilCombination::Sense));
        QCOMPARE(tune->coilMapsBox()->currentData().toInt(), int(recon::CoilMapMethod::Walsh));
        // The next multi-coil data set is solved with them: SENSE with Walsh maps of 4 virtual coils.
        quickSolves(w);
        w.openDemo(kEightCoils);
        QTRY_VERIFY_WITH_TIMEOUT(finished(*w.controller()) && w.controller()->coilMaps(), kSolveTimeoutMs);
        QCOMPARE(tune->virtualCoilsBox()->value(), 4);
        QCOMPARE(w.controller()->coilMaps()->coils, 4);
        QCOMPARE(w.controller()->coilMaps()->source, std::string("walsh"));
        QVERIFY(w.dataPanel()->field(QStringLiteral("Virtual coils")).startsWith(QStringLiteral("4 of 8 coils")));
        // The SENSE solve was the density-weighted one: its s, Q_D(0), is shown as such.
        QVERIFY(w.controller()->lambdaScale() > 0 && w.controller()->lambdaScale() != w.controller()->summary().lambda_scale);
        const QString scale = w.dataPanel()->field(QStringLiteral("lambda scale"));
        QVERIFY2(scale.startsWith(QStringLiteral("density-weighted data term: s = Q_D(0)")) &&
                     scale.contains(QString::number(w.controller()->lambdaScale(), 'g', 5)),
                 qPrintable(scale));
        w.close();
    }

    // A settings file from another version (or edited by hand): a value this version does not
    // know keeps that one choice's default, and the others are still restored.
    void anUnknownValueKeepsOnlyThatDefault() {
        {
            QSettings s;
            s.setValue("recon/coil_combination", QStringLiteral("sense"));
            s.setValue("recon/coil_maps", QStringLiteral("no-such-method"));
            s.setValue("recon/virtual_coils", -3);
            s.setValue("recon/data_weighting", QStringLiteral("no-such-term"));
        }
        MainWindow w(persisted());
        const ReconSettings& r = w.controller()->settings();
        QVERIFY(r.coil_combination == recon::CoilCombination::Sense);
        QVERIFY(r.coil_maps == ReconSettings{}.coil_maps);
        QCOMPARE(r.virtual_coils, 0);
        QVERIFY(r.weighting == ReconSettings{}.weighting);
    }
};

QTEST_MAIN(TestSettingsPersistence)
#include "test_settings_persistence.moc"
