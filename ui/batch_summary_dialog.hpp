// A batch's summary (docs/BATCH.md) as a table: one row per data set with its
// status, time, quality and message. Opening a row loads that data set into the
// main window with the row's own recipe, so it is browsed in the same linked views.
#pragma once

#include <QDialog>

#include "recipe_bridge.hpp"

class QTableWidget;

namespace studio {

class BatchSummaryDialog : public QDialog {
    Q_OBJECT
public:
    BatchSummaryDialog(const QString& summary_json, const QVector<BatchSummaryRow>& rows, QWidget* parent = nullptr);
    QTableWidget* table() const { return table_; }

signals:
    void openRequested(const studio::BatchSummaryRow& row);

private:
    QVector<BatchSummaryRow> rows_;
    QTableWidget* table_;
};

}  // namespace studio
