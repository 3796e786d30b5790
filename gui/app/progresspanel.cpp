#include "app/progresspanel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include <algorithm>

namespace scaledesk::gui {

ProgressPanel::ProgressPanel(QWidget* parent) : QWidget(parent), m_label(new QLabel), m_bar(new QProgressBar), m_cancel(new QToolButton)
{
    auto* l = new QHBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    m_label->setTextFormat(Qt::PlainText);
    m_label->setMaximumWidth(520);  // long texts elide (below) and never widen the window
    m_bar->setFixedWidth(160);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop this task"));
    l->addWidget(m_label);
    l->addWidget(m_bar);
    l->addWidget(m_cancel);
    connect(m_cancel, &QToolButton::clicked, this, [this] {
        if (!m_order.isEmpty()) emit cancelRequested(m_order.last());
    });
    setVisible(false);
}

void ProgressPanel::setTask(const QString& task, const QString& text, qint64 done, qint64 total)
{
    if (!m_tasks.contains(task)) m_order << task;
    m_tasks[task] = Entry{text, done, total};
    show();
}

void ProgressPanel::endTask(const QString& task)
{
    m_tasks.remove(task);
    m_order.removeAll(task);
    show();
}

void ProgressPanel::show()
{
    setVisible(!m_order.isEmpty());
    if (m_order.isEmpty()) return;
    const Entry& e = m_tasks[m_order.last()];
    QString text = e.text;
    if (m_order.size() > 1) text += tr(" (+%1 more)").arg(m_order.size() - 1);
    QStringList all;
    for (auto it = m_order.crbegin(); it != m_order.crend(); ++it) all << m_tasks[*it].text;
    m_label->setToolTip(all.join(QLatin1Char('\n')));
    m_label->setText(m_label->fontMetrics().elidedText(text, Qt::ElideMiddle, m_label->maximumWidth()));
    if (e.total > 0 && e.total <= 1000) {  // a count: "2 of 4"
        m_bar->setRange(0, int(e.total));
        m_bar->setValue(int(std::clamp<qint64>(e.done, 0, e.total)));
        m_bar->setFormat(tr("%v of %m"));
        m_bar->setTextVisible(true);
    } else if (e.total > 0) {  // bytes: QProgressBar counts in int, so in thousandths
        const double f = double(e.done) / double(e.total);
        m_bar->setRange(0, 1000);
        m_bar->setValue(int(std::clamp(f, 0.0, 1.0) * 1000));
        m_bar->setFormat(QStringLiteral("%p%"));
        m_bar->setTextVisible(true);
    } else {
        m_bar->setRange(0, 0);  // busy
        m_bar->setTextVisible(false);
    }
}

}  // namespace scaledesk::gui
