// txlm-glib from GJS (gjs -m): the demo model loaded asynchronously on a
// main loop (progress notified before the callback), a seeded generation
// equal to `txlm generate`'s text, a long generation cancelled after a
// few tokens (G_IO_ERROR_CANCELLED, the memory the prompt and the tokens
// announced), GErrors for a missing and a damaged model file, the device
// list. Environment: TXLM_CLI (build/tools/txlm), TXLM_DEMO (the demo
// model), GI_TYPELIB_PATH and LD_LIBRARY_PATH (the build).
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Txlm from 'gi://Txlm';
import {exit} from 'system';

const cli = GLib.getenv('TXLM_CLI'), demo = GLib.getenv('TXLM_DEMO');
const loop = new GLib.MainLoop(null, false);
let failures = 0;
// a callback whose exception fails the test and ends the loop (instead of leaving it waiting)
function guard(fn) {
    return (...args) => {
        try {
            fn(...args);
        } catch (e) {
            check(false, `${e}\n${e.stack}`);
            loop.quit();
        }
    };
}
function check(ok, what) {
    print(`${ok ? 'ok' : 'FAIL'}: ${what}`);
    if (!ok)
        failures++;
}

// What `txlm generate --no-display-prompt` prints, without its last line break.
function cliGenerate(prompt, n, seed) {
    const argv = [cli, 'generate', '-m', demo, '-p', prompt, '-n', `${n}`, '--seed', `${seed}`, '--no-display-prompt'];
    const proc = Gio.Subprocess.new(argv, Gio.SubprocessFlags.STDOUT_PIPE | Gio.SubprocessFlags.STDERR_SILENCE);
    const [, out] = proc.communicate_utf8(null, null);
    if (!proc.get_successful())
        throw new Error(`txlm generate failed: ${argv.join(' ')}`);
    return out.slice(0, -1);
}

function tokensOf(model, text) {
    return model.tokenize(text).length;
}

// a generation, the ::token texts and whether one came after the callback
function generate(session, prompt, n, seed, cancelAt, done) {
    const r = {tokens: [], late: false, finished: false};
    const cancellable = new Gio.Cancellable();
    const id = session.connect('token', (_s, text) => {
        r.late ||= r.finished;
        r.tokens.push(text);
        if (r.tokens.length === cancelAt)
            cancellable.cancel();
    });
    session.generate_async(prompt, n, seed, cancellable, (s, res) => {
        r.finished = true;
        s.disconnect(id);
        try {
            r.text = s.generate_finish(res);
        } catch (e) {
            r.error = e;
        }
        done(r);
    });
}

function loadErrors(then) {
    const missing = GLib.build_filenamev([GLib.get_tmp_dir(), `txlm-gjs-missing-${GLib.random_int()}.txlm`]);
    Txlm.Model.load_async(missing, null, guard((_o, res) => {
        try {
            Txlm.Model.load_finish(res);
            check(false, 'a missing file loads');
        } catch (e) {
            check(e.matches(Txlm.Error, Txlm.Error.IO) && e.message.includes(missing),
                `a missing file: Txlm.Error.IO (${e.message})`);
        }
        // the demo model with 4 bytes of its tensors overwritten
        const [, bytes] = GLib.file_get_contents(demo);
        bytes.fill(0xff, bytes.length >> 1, (bytes.length >> 1) + 4);
        const [fd, damaged] = GLib.file_open_tmp('txlm-gjs-XXXXXX.txlm');
        GLib.close(fd);
        GLib.file_set_contents(damaged, bytes);
        try {
            Txlm.Model.new(damaged, null);
            check(false, 'a damaged file loads');
        } catch (e) {
            check(e.matches(Txlm.Error, Txlm.Error.CHECKSUM), `a damaged file: Txlm.Error.CHECKSUM (${e.message})`);
        }
        GLib.unlink(damaged);
        then();
    }));
}

const devices = Txlm.Device.list();
check(devices.get_n_items() >= 1 && devices.get_item(0).name.length > 0, `devices: ${devices.get_item(0).name}`);

const model = new Txlm.Model({path: demo});
const progress = [];
let loaded = false;
model.connect('notify::progress', () => {
    if (loaded)
        progress.late = true;
    progress.push(model.progress);
});
model.init_async(GLib.PRIORITY_DEFAULT, null, guard((_m, res) => {
    loaded = true;
    model.init_finish(res);
    check(model.loaded && progress.length >= 10 && progress[progress.length - 1] === 1 && !progress.late &&
        progress.every((p, i) => i === 0 || p >= progress[i - 1]),
    `loaded asynchronously, ${progress.length} progress notifications in order, all before the callback`);
    const session = model.create_session();
    const prompt = 'The secret of life is';
    generate(session, prompt, 30, 1, 0, guard(r => {
        const want = cliGenerate(prompt, 30, 1);
        check(r.text === want, `seed 1: ${JSON.stringify(r.text)} is txlm generate's ${JSON.stringify(want)}`);
        check(r.tokens.length === 30 && r.tokens.join('') === r.text && !r.late,
            '30 ::token signals before the callback, their texts the result');
        const long = model.create_session();
        generate(long, prompt, 100, 11, 4, guard(c => {
            const fed = tokensOf(model, prompt) + c.tokens.length;
            check(c.error?.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED) && c.tokens.length < 100,
                `cancelled after ${c.tokens.length} tokens: ${c.error?.message}`);
            check(long.get_memory_length() === fed, `memory ${long.get_memory_length()} = prompt + tokens announced (${fed})`);
            check(c.tokens.join('') === cliGenerate(prompt, c.tokens.length, 11), 'the tokens announced are txlm generate\'s');
            loadErrors(guard(() => {
                check(model.get_validation_messages() === 0, 'no validation messages');
                loop.quit();
            }));
        }));
    }));
}));
loop.run();
print(`${failures} failures`);
exit(failures ? 1 : 0);
