import { benchCommand } from './bench.js';
import { infoCommand } from './info.js';

const COMMANDS: Record<string, { run: (args: string[]) => number | Promise<number>; help: string }> = {
  info: { run: infoCommand, help: 'driver, runtime, cuFFT and NVRTC versions and every device (--json for machines)' },
  bench: { run: benchCommand, help: 'microbenchmarks against C, CuPy, PyTorch and cuda-python (--help)' },
};

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    console.log(`usage: tscuda <command>\n${Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(8)} ${c.help}`).join('\n')}`);
    return name && name !== '--help' && name !== 'help' ? 1 : 0;
  }
  return command.run(args);
}

process.exitCode = await main(process.argv.slice(2));
