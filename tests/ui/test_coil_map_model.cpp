// The Coil maps tab's view model without widgets: what it shows of which coil on which
// slice, checked voxel by voxel against maps whose values identify coil and voxel.
#include <QSignalSpy>
#include <QTest>

#include <cmath>

#include "recon/core/errors.hpp"
#include "ui/coil_map_view_model.hpp"
#include "ui/slice_rendering.hpp"

using namespace studio;

namespace {

constexpr int kCoils = 5;

// Coil c at voxel (x, y, z): magnitude (1 + x + 10 y + 100 z + 1000 c) / 10000, phase 0.1 (c + 1) - 2,
// zero outside the mask (x >= 1), as maps are.
std::shared_ptr<const recon::CoilMaps> codedMaps(const recon::Grid& g) {
    auto m = std::make_shared<recon::CoilMaps>();
    m->coils = kCoils;
    m->source = "espirit";
    m->maps.resize(std::size_t(kCoils) * g.voxels());
    m->mask.resize(g.voxels());
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x) {
                const std::size_t v = g.index(x, y, z);
                m->mask[v] = x >= 1;
                for (int c = 0; c < kCoils; ++c)
                    m->maps[std::size_t(c) * g.voxels() + v] =
                        x >= 1 ? std::polar((1.0 + x + 10.0 * y + 100.0 * z + 1000.0 * c) / 10000, 0.1 * (c + 1) - 2)
                               : recon::cdouble(0);
            }
    return m;
}

double magnitudeAt(int c, int x, int y, int z) { return x >= 1 ? (1.0 + x + 10.0 * y + 100.0 * z + 1000.0 * c) / 10000 : 0; }

}  // namespace

class TestCoilMapModel : public QObject {
    Q_OBJECT
private slots:
    void showsTheChosenCoilOnTheCurrentSlice() {
        const recon::Grid g = recon::Grid::make3D(4, 3, 6);
        SliceViewModel slices;
        slices.setGrid(g, 1);
        CoilMapViewModel model(&slices);
        QVERIFY(!model.hasMaps());
        QVERIFY(model.render().isNull());
        QVERIFY(model.caption().contains(QStringLiteral("SENSE")));
        QSignalSpy changed(&model, &CoilMapViewModel::changed);
        model.setMaps(codedMaps(g), g);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.coils(), kCoils);
        QCOMPARE(model.maskVoxels(), std::size_t(3 * 3 * 6));
        QCOMPARE(model.maxMagnitude(), magnitudeAt(kCoils - 1, 3, 2, 5));

        for (Orientation o : {Orientation::Axial, Orientation::Coronal, Orientation::Sagittal}) {
            slices.setOrientation(o);
            for (int s : {0, 2}) {
                slices.setSlice(s);
                for (int c : {0, 3}) {
                    model.setComponent(CoilMapComponent::Magnitude);
                    const SliceData mag = model.slice(c);
                    model.setComponent(CoilMapComponent::Phase);
                    const SliceData phase = model.slice(c);
                    model.setComponent(CoilMapComponent::Mask);
                    const SliceData mask = model.slice(c);
                    const auto size = sliceSize(g, o);
                    QCOMPARE(mag.width, size[0]);
                    QCOMPARE(mag.height, size[1]);
                    for (int row = 0; row < mag.height; ++row)
                        for (int column = 0; column < mag.width; ++column) {
                            const auto v = voxelOf(g, o, s, column, row);
                            QVERIFY(std::abs(mag.at(column, row) - magnitudeAt(c, v[0], v[1], v[2])) < 1e-6);
                            const double expected_phase = v[0] >= 1 ? 0.1 * (c + 1) - 2 : 0.0;
                            QVERIFY(std::abs(phase.at(column, row) - expected_phase) < 1e-6);
                            QCOMPARE(mask.at(column, row), v[0] >= 1 ? 1.0f : 0.0f);
                        }
                }
            }
        }
    }

    void followsTheSliceAndClampsTheCoil() {
        const recon::Grid g = recon::Grid::make3D(4, 3, 6);
        SliceViewModel slices;
        slices.setGrid(g, 1);
        CoilMapViewModel model(&slices);
        model.setMaps(codedMaps(g), g);
        QSignalSpy changed(&model, &CoilMapViewModel::changed);
        slices.setSlice(4);
        QCOMPARE(changed.count(), 1);
        QVERIFY(model.caption().contains(QStringLiteral("slice 4 of 6")));
        slices.setOrientation(Orientation::Sagittal);
        QCOMPARE(changed.count(), 2);
        model.setCoil(99);
        QCOMPARE(model.coil(), kCoils - 1);
        model.setCoil(-7);
        QCOMPARE(model.coil(), CoilMapViewModel::kAllCoils);
        model.setCoil(2);
        QVERIFY(model.caption().startsWith(QStringLiteral("coil 3 of 5 from ESPIRiT")));
        // New maps with fewer coils keep the choice inside their range; none clears the picture.
        auto two = std::make_shared<recon::CoilMaps>(*codedMaps(g));
        two->coils = 2;
        two->maps.resize(2 * g.voxels());
        model.setCoil(4);
        model.setMaps(two, g);
        QCOMPARE(model.coil(), 1);
        model.setMaps(nullptr, g);
        QVERIFY(!model.hasMaps());
        QCOMPARE(model.coils(), 0);
        QVERIFY(model.render().isNull());
    }

    void allCoilsAreTiledAndPhaseIsBlackOutsideTheMask() {
        const recon::Grid g = recon::Grid::make2D(6, 4);
        SliceViewModel slices;
        slices.setGrid(g, 1);
        CoilMapViewModel model(&slices);
        model.setMaps(codedMaps(g), g);
        QCOMPARE(model.tiling(), (std::array<int, 2>{3, 2}));  // 5 coils: 3 columns, 2 rows
        for (CoilMapComponent component : {CoilMapComponent::Magnitude, CoilMapComponent::Phase}) {
            model.setComponent(component);
            model.setCoil(CoilMapViewModel::kAllCoils);
            const QImage all = model.render();
            QCOMPARE(all.size(), QSize(3 * 6 + 2, 2 * 4 + 1));
            for (int c = 0; c < kCoils; ++c) {
                model.setCoil(c);
                const QImage one = model.render();
                QCOMPARE(one.size(), QSize(6, 4));
                for (int row = 0; row < 4; ++row)
                    for (int column = 0; column < 6; ++column) {
                        const QRgb tile = all.pixel((c % 3) * 7 + column, (c / 3) * 5 + row);
                        QCOMPARE(qRed(tile), qRed(one.pixel(column, row)));
                        QCOMPARE(qBlue(tile), qBlue(one.pixel(column, row)));
                        if (component == CoilMapComponent::Phase && column == 0)  // x = 0: outside the mask
                            QCOMPARE(one.pixel(column, row), qRgb(0, 0, 0));
                    }
            }
        }
        // Magnitude: the brightest voxel white, a zero map black.
        model.setComponent(CoilMapComponent::Magnitude);
        model.setCoil(kCoils - 1);
        const QImage last = model.render();
        QCOMPARE(qRed(last.pixel(5, 3)), 255);  // the largest magnitude of every coil
        QCOMPARE(qRed(last.pixel(0, 0)), 0);
        // The mask does not depend on the coil: one picture.
        model.setComponent(CoilMapComponent::Mask);
        model.setCoil(CoilMapViewModel::kAllCoils);
        QCOMPARE(model.render().size(), QSize(6, 4));
        QCOMPARE(model.render().pixel(0, 0), qRgb(0, 0, 0));
        QCOMPARE(model.render().pixel(1, 0), qRgb(255, 255, 255));
    }

    void mapsOfTheWrongSizeAreRefused() {
        const recon::Grid g = recon::Grid::make2D(6, 4);
        SliceViewModel slices;
        CoilMapViewModel model(&slices);
        try {
            model.setMaps(codedMaps(g), recon::Grid::make2D(8, 8));
            QFAIL("maps of a 6x4 grid accepted on 8x8");
        } catch (const recon::InputError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("8x8")), e.what());
        }
        QVERIFY(!model.hasMaps());
    }
};

QTEST_MAIN(TestCoilMapModel)
#include "test_coil_map_model.moc"
