#include "batch_summary_dialog.hpp"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace studio {

BatchSummaryDialog::BatchSummaryDialog(const QString& summary_json, const QVector<BatchSummaryRow>& rows,
                                       QWidget* parent)
    : QDialog(parent), rows_(rows), table_(new QTableWidget(int(rows.size()), 6, this)) {
    setWindowTitle(tr("Batch summary — %1").arg(QFileInfo(summary_json).absolutePath()));
    table_->setHorizontalHeaderLabels({tr("Data set"), tr("Status"), tr("Seconds"), tr("PSNR dB"), tr("Error %"),
                                       tr("Message")});
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    auto number = [](const std::optional<double>& v, int digits) { return v ? QString::number(*v, 'f', digits) : QString(); };
    for (int i = 0; i < rows.size(); ++i) {
        const BatchSummaryRow& r = rows[i];
        const QStringList cells = {QFileInfo(r.input).fileName(), r.status,
                                   r.status == "pending" ? QString() : QString::number(r.seconds, 'f', 2),
                                   number(r.psnr_db, 2), number(r.error_percent, 2), r.message};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setToolTip(c == 0 ? r.input : cells[c]);
            table_->setItem(i, c, item);
        }
    }
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->resizeColumnsToContents();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    QPushButton* open = buttons->addButton(tr("&Open in Views"), QDialogButtonBox::ActionRole);
    open->setToolTip(tr("Load this data set with its batch recipe into the main window"));
    auto openCurrent = [this] {
        const int row = table_->currentRow();
        if (row >= 0 && row < rows_.size()) emit openRequested(rows_[row]);
    };
    connect(open, &QPushButton::clicked, this, openCurrent);
    connect(table_, &QTableWidget::cellDoubleClicked, this, openCurrent);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_);
    layout->addWidget(buttons);
    resize(820, 360);
}

}  // namespace studio
