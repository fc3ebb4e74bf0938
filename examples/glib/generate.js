// Loads a model without blocking the main loop (its progress on stderr),
// generates with a seed, printing each token as it comes, then goes on
// and cancels after 10 tokens, as a stop button would.
//
//   gjs -m generate.js models/demo.txlm
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Txlm from 'gi://Txlm';
import {programArgs, exit} from 'system';

const loop = new GLib.MainLoop(null, false);
const stdout = new Gio.UnixOutputStream({fd: 1, close_fd: false});
const write = text => stdout.write_all(new TextEncoder().encode(text), null);
let status = 0;
function fail(error) {
    printerr(`error: ${error.message}`);
    status = 1;
    loop.quit();
}

const model = new Txlm.Model({path: programArgs[0]});
model.connect('notify::progress', () => printerr(`loading ${Math.round(100 * model.progress)}%`));
model.init_async(GLib.PRIORITY_DEFAULT, null, (_model, result) => {
    let session;
    try {
        model.init_finish(result);
        session = model.create_session();
    } catch (error) {
        fail(error);
        return;
    }
    let tokens = 0;
    let stop = null; // the second generation's stop button
    session.connect('token', (_session, text) => {
        write(text);
        if (++tokens === 10 && stop)
            stop.cancel(); // the engine stops after the token it is making
    });
    session.generate_async('The secret of life is', 40, 1, null, (_s, first) => {
        try {
            session.generate_finish(first); // the tokens were printed as they came
        } catch (error) {
            fail(error);
            return;
        }
        write('\n---\n');
        // go on from the memory (no prompt), until stopped
        tokens = 0;
        stop = new Gio.Cancellable();
        session.generate_async(null, 200, 2, stop, (_s2, second) => {
            try {
                session.generate_finish(second);
            } catch (error) {
                if (!error.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED)) {
                    fail(error);
                    return;
                }
                write(`\n[stopped after ${tokens} tokens; the memory holds ${session.get_memory_length()} tokens]\n`);
            }
            loop.quit();
        });
    });
});
loop.run();
exit(status);
