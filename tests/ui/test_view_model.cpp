// The widget-free pieces of the workstation: slice geometry, the shared view
// model, slice extraction and rendering, and the CSV/JSON exports.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "recon/core/conventions.hpp"
#include "recon/core/errors.hpp"
#include "ui/exports.hpp"
#include "ui/slice_rendering.hpp"
#include "ui/slice_view_model.hpp"
#include "ui_test_support.hpp"

using namespace studio;
using studio::testing::codedValue;
using studio::testing::codedVolume;

class TestViewModel : public QObject {
    Q_OBJECT
private slots:
    void pixelAndVoxelAreInverse() {
        const recon::Grid g = recon::Grid::make3D(4, 5, 6);
        for (Orientation o : {Orientation::Axial, Orientation::Coronal, Orientation::Sagittal}) {
            const PlaneAxes a = planeAxes(o);
            const auto size = sliceSize(g, o);
            QCOMPARE(size[0], g.n[a.u]);
            QCOMPARE(size[1], g.n[a.v]);
            for (int z = 0; z < 6; ++z)
                for (int y = 0; y < 5; ++y)
                    for (int x = 0; x < 4; ++x) {
                        const std::array<int, 3> v{x, y, z};
                        const SlicePixel p = pixelOf(g, o, v);
                        QVERIFY(p.column >= 0 && p.column < size[0] && p.row >= 0 && p.row < size[1]);
                        QCOMPARE(voxelOf(g, o, v[a.normal], p.column, p.row), v);
                    }
        }
        // Superior up: the top row of coronal and sagittal slices is the last z.
        QCOMPARE(voxelOf(g, Orientation::Coronal, 2, 0, 0)[2], 5);
        QCOMPARE(voxelOf(g, Orientation::Sagittal, 1, 0, 0)[2], 5);
        QCOMPARE(voxelOf(g, Orientation::Axial, 3, 0, 0)[1], 0);
    }

    void extractsTheSliceOfEachOrientation() {
        const recon::Grid g = recon::Grid::make3D(4, 5, 6);
        const Volume vol = codedVolume(g);
        const SliceData axial = extractSlice(vol, Orientation::Axial, 2, DisplayMode::Real);
        QCOMPARE(axial.width, 4);
        QCOMPARE(axial.height, 5);
        QCOMPARE(axial.at(3, 4), float(codedValue(3, 4, 2)));
        const SliceData coronal = extractSlice(vol, Orientation::Coronal, 1, DisplayMode::Real);
        QCOMPARE(coronal.width, 4);
        QCOMPARE(coronal.height, 6);
        QCOMPARE(coronal.at(2, 0), float(codedValue(2, 1, 5)));
        const SliceData sagittal = extractSlice(vol, Orientation::Sagittal, 3, DisplayMode::Real, 2.0);
        QCOMPARE(sagittal.width, 5);
        QCOMPARE(sagittal.at(4, 5), float(2.0 * codedValue(3, 4, 0)));
        // Slice indices beyond the grid are clamped, never read out of bounds.
        QCOMPARE(extractSlice(vol, Orientation::Axial, 99, DisplayMode::Real).at(0, 0), float(codedValue(0, 0, 5)));
    }

    void displayModesOfAComplexValue() {
        const recon::cdouble v(3.0, -4.0);
        QCOMPARE(displayValue(v, DisplayMode::Magnitude), 5.0);
        QCOMPARE(displayValue(v, DisplayMode::Real), 3.0);
        QCOMPARE(displayValue(v, DisplayMode::Imaginary), -4.0);
        QVERIFY(std::abs(displayValue(v, DisplayMode::Phase) - std::atan2(-4.0, 3.0)) < 1e-15);
    }

    void windowLevelMapsValuesToGrey() {
        SliceData s;
        s.width = 5;
        s.height = 1;
        s.values = {-1.0f, 0.0f, 0.5f, 1.0f, 2.0f};
        const QImage img = renderSlice(s, WindowLevel::fromRange(0, 1), ColorMap::Gray);
        QCOMPARE(qGray(img.pixel(0, 0)), 0);    // below the window: black
        QCOMPARE(qGray(img.pixel(1, 0)), 0);
        QVERIFY(std::abs(qGray(img.pixel(2, 0)) - 128) <= 1);
        QCOMPARE(qGray(img.pixel(3, 0)), 255);
        QCOMPARE(qGray(img.pixel(4, 0)), 255);  // above: white
        const QImage hot = renderSlice(s, WindowLevel::fromRange(0, 1), ColorMap::Hot);
        QCOMPARE(hot.pixel(0, 0), colorTable(ColorMap::Hot)[0]);
        QCOMPARE(hot.pixel(4, 0), colorTable(ColorMap::Hot)[255]);
        // Viridis starts dark purple and ends yellow.
        QVERIFY(qBlue(colorTable(ColorMap::Viridis)[0]) > qGreen(colorTable(ColorMap::Viridis)[0]));
        QVERIFY(qRed(colorTable(ColorMap::Viridis)[255]) > 200 && qBlue(colorTable(ColorMap::Viridis)[255]) < 80);
    }

    void autoWindowFollowsPercentiles() {
        SliceData s;
        s.width = 100;
        s.height = 10;
        for (int i = 0; i < 1000; ++i) s.values.push_back(float(i % 100));
        s.values[0] = 1e6f;  // one hot voxel must not stretch the window
        const WindowLevel wl = percentileWindow(s, 1, 99);
        QVERIFY(std::abs(wl.low() - 1) <= 1);
        QVERIFY(std::abs(wl.high() - 98) <= 1);
    }

    void modelCentresClampsAndSignals() {
        SliceViewModel m;
        QSignalSpy cursor(&m, &SliceViewModel::cursorChanged);
        m.setGrid(recon::Grid::make3D(8, 10, 12), 2.0);
        QCOMPARE(m.cursor(), (std::array<int, 3>{4, 5, 6}));
        QCOMPARE(m.slice(), 6);
        QCOMPARE(m.sliceCount(), 12);
        QVERIFY(cursor.count() >= 1);
        m.stepSlice(100);
        QCOMPARE(m.slice(), 11);
        m.stepSlice(-3);
        QCOMPARE(m.slice(), 8);
        m.setOrientation(Orientation::Sagittal);
        QCOMPARE(m.slice(), 4);  // the cursor's x
        QCOMPARE(m.sliceCount(), 8);
        m.setCursor({-5, 3, 50});
        QCOMPARE(m.cursor(), (std::array<int, 3>{0, 3, 11}));
        m.setZoom(1000);
        QCOMPARE(m.zoom(), 64.0);
        m.resetView();
        QCOMPARE(m.zoom(), 1.0);
        // A 2D grid has only the axial plane.
        m.setGrid(recon::Grid::make2D(16, 16), 1.0);
        QCOMPARE(toString(m.orientation()), toString(Orientation::Axial));
        QCOMPARE(m.sliceCount(), 1);
    }

    void windowLevelPresetsAndDrag() {
        SliceViewModel m;
        m.setGrid(recon::Grid::make2D(16, 16), 2.0);
        QCOMPARE(m.windowLevel().low(), 0.0);  // full range of magnitudes
        QCOMPARE(m.windowLevel().high(), 2.0);
        m.applyPreset(QStringLiteral("Soft tissue"));
        QCOMPARE(m.windowLevel().high(), 1.0);
        const WindowLevel before = m.windowLevel();
        QSignalSpy changed(&m, &SliceViewModel::windowLevelChanged);
        m.dragWindowLevel(50, 0);  // right: wider window, same level
        QVERIFY(std::abs(m.windowLevel().window - (before.window + 50 * 2.0 / 500)) < 1e-12);
        QCOMPARE(m.windowLevel().level, before.level);
        m.dragWindowLevel(0, 25);  // down: higher level
        QVERIFY(std::abs(m.windowLevel().level - (before.level + 25 * 2.0 / 500)) < 1e-12);
        QCOMPARE(changed.count(), 2);
        m.dragWindowLevel(-1e6, 0);  // the window never collapses to zero or below
        QVERIFY(m.windowLevel().window > 0);
        m.setDisplayMode(DisplayMode::Phase);
        QVERIFY(std::abs(m.windowLevel().low() + recon::kPi) < 1e-12);
        QVERIFY(std::abs(m.windowLevel().high() - recon::kPi) < 1e-12);
        m.setDisplayMode(DisplayMode::Real);
        QCOMPARE(m.windowLevel().low(), -2.0);
    }

    void convergenceCsvHasOneRowPerIteration() {
        std::vector<recon::IterationRecord> h(3);
        for (int i = 0; i < 3; ++i) {
            h[i].iteration = i + 1;
            h[i].residual = std::pow(0.1, i + 1);
            h[i].data_term = 10.0 / (i + 1);
            h[i].penalty_term = 1;
            h[i].has_truth = i > 0;
            h[i].psnr_db = 20 + i;
            h[i].error_percent = 30 - i;
        }
        const QList<QByteArray> lines = convergenceCsv(h).trimmed().split('\n');
        QCOMPARE(lines.size(), 4);
        QCOMPARE(lines[0], QByteArray("iteration,seconds,residual,data_term,penalty_term,cost,psnr_db,error_percent"));
        const QList<QByteArray> row = lines[2].split(',');
        QCOMPARE(row.size(), 8);
        QCOMPARE(row[0].toInt(), 2);
        QCOMPARE(row[5].toDouble(), 6.0);  // cost = data + penalty
        QCOMPARE(row[6].toDouble(), 21.0);
        QVERIFY(lines[1].endsWith(",,"));  // no truth: PSNR and error left empty
    }

    void savingOverTheInputIsRefused() {
        QTemporaryDir dir;
        const QString input = dir.filePath("raw_iterative.mrd");
        QFile f(input);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write("raw") == 3);
        f.close();
        QVERIFY(QFile::link(input, dir.filePath("link_iterative.mrd")));
        DatasetSummary data;
        data.origin = input;
        for (const char* name : {"raw_iterative.mrd", "link_iterative.mrd"}) {
            try {
                refuseSavingOverInput(dir.filePath(name), data);
                QFAIL("saving over the input was not refused");
            } catch (const recon::InputError& e) {
                QVERIFY2(QString(e.what()).contains("would overwrite the input"), e.what());
            }
        }
        refuseSavingOverInput(dir.filePath("raw_gridding-kb.mrd"), data);  // another file: fine
        data.origin = QStringLiteral("small-2d");                           // a demo: no file
        refuseSavingOverInput(dir.filePath("small-2d"), data);
    }

    void settingsRoundTripAndBadInput() {
        ReconSettings s;
        s.lambda = 0.125;
        s.iterations = 17;
        s.regularizer = recon::RegularizerKind::Tikhonov;
        s.precision = recon::Precision::Double;
        s.backend = recon::BackendChoice::Cpu;
        s.method = QStringLiteral("direct");
        DatasetSummary d;
        d.lambda_scale = 1234.5;
        const QByteArray json = settingsJson(s, d, BackendReport{}, d.lambda_scale);
        QVERIFY(json.contains("\"lambda_scale\": 1234.5"));
        QVERIFY(json.contains("\"data_weighting\": \"uniform\""));
        QCOMPARE(settingsFromJson(json), s);
        // The density-weighted data term: named, with its own s, and read back.
        s.weighting = recon::DataWeighting::Density;
        const QByteArray weighted = settingsJson(s, d, BackendReport{}, 99.5);
        QVERIFY2(weighted.contains("\"data_weighting\": \"density\"") && weighted.contains("\"lambda_scale\": 99.5") &&
                     weighted.contains("Q_D(0)"),
                 weighted.constData());
        QCOMPARE(settingsFromJson(weighted), s);
        try {
            settingsFromJson(R"({"data_weighting": "pipe-menon"})");
            QFAIL("an unknown data term was accepted");
        } catch (const recon::InputError& e) {
            QVERIFY2(QString(e.what()).contains("data_weighting") && QString(e.what()).contains("pipe-menon"), e.what());
        }
        try {
            settingsFromJson(R"({"lambda": -1})");
            QFAIL("a negative lambda was accepted");
        } catch (const recon::InputError& e) {
            QVERIFY(QString(e.what()).contains("lambda"));
        }
        QVERIFY_THROWS_EXCEPTION(recon::InputError, settingsFromJson("not json"));
        try {
            settingsFromJson(R"({"regularizer": "lasso"})");
            QFAIL("an unknown regulariser was accepted");
        } catch (const recon::InputError& e) {
            QVERIFY2(QString(e.what()).contains("regularizer") && QString(e.what()).contains("lasso"), e.what());
        }
    }
};

QTEST_MAIN(TestViewModel)
#include "test_view_model.moc"
