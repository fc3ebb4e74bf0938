/* txlm in a Qt 6 program over the plain C API: a worker object on its own
 * QThread loads a model and generates, emitting a Qt signal for the load's
 * progress and for each token; the signals cross to the main thread as
 * queued calls, where a user interface would show them. The program
 * generates 40 tokens from a prompt with seed 1, printing each as it
 * comes, then goes on with seed 2 and cancels after 10 tokens, as a stop
 * button would: the main thread raises a flag that txlm's progress
 * callback, on the worker's thread, returns after the next token.
 *
 *   moc=$(pkg-config --variable=libexecdir Qt6Core)/moc
 *   $moc generate.cpp -o generate.moc
 *   c++ -std=c++17 -fPIC -I. generate.cpp $(pkg-config --cflags --libs Qt6Core txlm) -o generate-qt
 *   ./generate-qt models/demo.txlm
 */
#include <QCoreApplication>
#include <QThread>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <txlm.h>
#include <vector>

// Lives on the worker thread: every txlm call runs there, one at a time.
class Worker : public QObject {
    Q_OBJECT
public:
    ~Worker() override
    {
        txlm_detokenizer_free(detok);
        txlm_session_free(session);
        txlm_model_free(model);
        txlm_context_destroy(ctx);
    }
    // From any thread: the running call stops after its current step.
    void requestStop() { stop = true; }

public slots:
    void load(const QString &path)
    {
        txlm_model_options options = {};
        options.progress = [](void *self, double fraction) {
            emit static_cast<Worker *>(self)->loadProgress(fraction);
            return 0;
        };
        options.progress_user = this;
        txlm_status st = txlm_context_create(nullptr, &ctx);
        if (!st) st = txlm_model_load(ctx, path.toUtf8().constData(), &options, &model);
        txlm_model_params params;
        if (!st) txlm_model_get_params(model, &params);
        // the settings txlm generate uses: segments of the model's tgt_len
        txlm_session_options so = {};
        so.same_length = -1;
        so.max_segment = !st && params.tgt_len ? params.tgt_len : 128;
        if (!st) st = txlm_session_create(model, &so, &session);
        if (!st) st = txlm_detokenizer_create(model, &detok);
        if (st) return fail(st);
        emit loaded();
    }

    // Feeds the prompt (none: go on from the memory), then draws and
    // feeds up to n tokens, emitting each one's text (one token signal a
    // token; a word model's last word can come with the end).
    void generate(const QString &prompt, int n, quint64 seed)
    {
        stop = false;
        txlm_session_set_seed(session, seed);
        txlm_detokenizer_reset(detok);
        QByteArray text = prompt.toUtf8();
        int32_t *ids = nullptr;
        size_t n_ids = 0;
        txlm_status st = txlm_tokenize(model, text.constData(), text.size(), &ids, &n_ids);
        if (!st && n_ids) st = txlm_session_feed_long(session, ids, n_ids, nullptr, nullptr, nullptr);
        // the prompt's text through the detokenizer, so that the first
        // token's spacing joins it; that text is the prompt's, not output
        skip = 0;
        if (!st && n_ids) {
            char *joined = nullptr;
            st = txlm_detokenize(model, ids, n_ids, &joined);
            if (!st) skip = strlen(joined);
            txlm_free(joined);
            for (size_t i = 0; !st && i < n_ids; i++) {
                const char *piece;
                size_t len;
                st = txlm_detokenizer_push(detok, ids[i], &piece, &len);
                skip -= std::min(len, skip);
            }
        }
        txlm_free(ids);
        if (st) return fail(st);
        tokens.assign(n, 0);
        made = 0;
        st = txlm_session_generate(session, nullptr, nullptr, n, tokens.data(), onToken, this, nullptr);
        const char *rest;
        size_t len;
        if (txlm_detokenizer_flush(detok, &rest, &len) == TXLM_OK && len > skip) emitText(rest, len);
        if (st && st != TXLM_ERR_CANCELLED) return fail(st);
        emit finished(st == TXLM_ERR_CANCELLED, int(made), txlm_session_memory_len(session));
    }

signals:
    void loadProgress(double fraction);
    void loaded();
    void token(const QString &text);
    void finished(bool cancelled, int made, uint memory);
    void failed(const QString &message);

private:
    // txlm's progress callback, on this thread, after each token is fed:
    // its text out; non-zero (the stop flag) ends the generation there.
    static int onToken(void *self, double)
    {
        auto *w = static_cast<Worker *>(self);
        const char *piece;
        size_t len;
        if (txlm_detokenizer_push(w->detok, w->tokens[w->made++], &piece, &len) == TXLM_OK) w->emitText(piece, len);
        return w->stop;
    }
    void emitText(const char *piece, size_t len)
    {
        size_t drop = std::min(len, skip);
        skip -= drop;
        emit token(QString::fromUtf8(piece + drop, qsizetype(len - drop)));
    }
    void fail(txlm_status st) { emit failed(QString("%1 (%2)").arg(txlm_last_error(), txlm_status_string(st))); }

    txlm_context *ctx = nullptr;
    txlm_model *model = nullptr;
    txlm_session *session = nullptr;
    txlm_detokenizer *detok = nullptr;
    std::vector<int32_t> tokens;
    size_t made = 0, skip = 0;
    std::atomic<bool> stop{false};
};

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s MODEL.txlm\n", argv[0]);
        return 2;
    }
    QThread thread;
    auto *worker = new Worker;
    worker->moveToThread(&thread);
    QObject::connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
    thread.start();

    // These run on the main thread (queued from the worker's).
    int count = 0, status = 0; // count: token signals of the second generation
    bool second = false;
    QObject::connect(worker, &Worker::loadProgress, &app,
                     [](double f) { std::fprintf(stderr, "\rloading %3.0f%%", 100 * f); });
    QObject::connect(worker, &Worker::loaded, &app, [&] {
        std::fprintf(stderr, "\n");
        QMetaObject::invokeMethod(worker, "generate", Q_ARG(QString, "The secret of life is"), Q_ARG(int, 40),
                                  Q_ARG(quint64, 1));
    });
    QObject::connect(worker, &Worker::token, &app, [&](const QString &text) {
        std::fputs(text.toUtf8().constData(), stdout);
        std::fflush(stdout);
        if (second && ++count == 10) worker->requestStop(); // a stop button
    });
    QObject::connect(worker, &Worker::finished, &app, [&](bool cancelled, int made, uint memory) {
        if (!second) { // go on from the memory, until stopped
            std::printf("\n---\n");
            second = true;
            QMetaObject::invokeMethod(worker, "generate", Q_ARG(QString, QString()), Q_ARG(int, 200),
                                      Q_ARG(quint64, 2));
            return;
        }
        // the worker may have made a token more than the 10 shown when the flag was seen
        if (cancelled) std::printf("\n[stopped after %d tokens; the memory holds %u tokens]\n", made, memory);
        app.quit();
    });
    QObject::connect(worker, &Worker::failed, &app, [&](const QString &message) {
        std::fprintf(stderr, "error: %s\n", message.toUtf8().constData());
        status = 1;
        app.quit();
    });
    QMetaObject::invokeMethod(worker, "load", Q_ARG(QString, QString::fromLocal8Bit(argv[1])));
    app.exec();
    thread.quit();
    thread.wait();
    return status;
}

#include "generate.moc"
