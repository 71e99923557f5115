#!/usr/bin/env python3
"""`meson install` into a temporary --destdir (issue 17 item 11): the binary
runs; every gnuplot script of scripts/gnuplot is installed and the
installed binary draws with those copies (-v names the directory); the man
page is valid troff and has a section for every subcommand `hetbatch
--help` lists; the bash completion parses and completes a subcommand, an
option and a policy; LICENSE is the license meson.build declares.

usage: test_install.py BUILD_ROOT SOURCE_ROOT"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def main():
    build, src = sys.argv[1], sys.argv[2]
    dest = tempfile.mkdtemp(prefix='hb-install-')
    try:
        r = subprocess.run(['meson', 'install', '-C', build, '--destdir', dest, '--no-rebuild', '--quiet'],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail('meson install: %s%s' % (r.stdout, r.stderr))
        intro = subprocess.run(['meson', 'introspect', build, '--buildoptions'], capture_output=True, text=True)
        opts = {o['name']: o['value'] for o in __import__('json').loads(intro.stdout)}
        root = dest + opts['prefix']
        exe = os.path.join(root, opts['bindir'], 'hetbatch')
        if not os.access(exe, os.X_OK):
            fail('no executable %s' % exe)
        top = subprocess.run([exe, '--help'], capture_output=True, text=True, check=True).stdout

        # gnuplot scripts: all of the source's, and the installed binary uses them
        gpdir = os.path.join(root, opts['datadir'], 'hetbatch', 'gnuplot')
        want = sorted(os.path.basename(p) for p in glob.glob(os.path.join(src, 'scripts', 'gnuplot', '*.gp')))
        have = sorted(os.listdir(gpdir)) if os.path.isdir(gpdir) else []
        if want != have:
            fail('gnuplot scripts installed %s, source has %s' % (have, want))
        if shutil.which('gnuplot'):
            work = tempfile.mkdtemp(prefix='plot-', dir=dest)
            env = dict(os.environ)
            env.pop('HETBATCH_GNUPLOT_DIR', None)
            r = subprocess.run([exe, '-v', 'sim', '--cluster', 'demo', '--model', 'resnet50', '--policy', 'jabas',
                                '--interval', '1000', '--out', 'o', '--plot'], cwd=work, env=env,
                               capture_output=True, text=True)
            if r.returncode != 0:
                fail('installed sim --plot: exit %d\n%s' % (r.returncode, r.stderr))
            m = re.search(r'with the scripts in (\S+)', r.stderr)
            if not m or os.path.realpath(m.group(1)) != os.path.realpath(gpdir):
                fail('installed binary plotted with %s, not %s:\n%s' % (m.group(1) if m else None, gpdir, r.stderr))
            if not glob.glob(os.path.join(work, 'o', '*.png')):
                fail('no figure drawn by the installed binary')
        else:
            print('gnuplot not on PATH: plotting with the installed scripts not checked')

        # man page: every subcommand has its section, and troff reads it cleanly
        man = os.path.join(root, opts['mandir'], 'man1', 'hetbatch.1')
        if not os.path.exists(man):
            fail('no man page %s' % man)
        text = open(man).read()
        subs = re.findall(r'^  (\S+)\s', top.split('Subcommands:')[1].split('\n\n')[0], re.M)
        if len(subs) < 5:
            fail('could not read the subcommands from --help: %s' % subs)
        for s in subs:
            if not re.search(r'^\.SS %s$' % re.escape(s), text, re.M):
                fail('man page has no section for %s' % s)
            sec = re.search(r'^\.SS %s\n(.*?)(?=^\.S[SH] )' % re.escape(s), text, re.M | re.S).group(1)
            if 'usage:' not in sec or 'hetbatch %s' % s not in sec:
                fail('the man page section of %s lacks its usage' % s)
        if shutil.which('groff'):
            r = subprocess.run(['groff', '-ww', '-man', '-z', man], capture_output=True, text=True)
            if r.returncode != 0 or r.stderr.strip():
                fail('groff warns on the man page:\n' + r.stderr)

        # bash completion
        comp = os.path.join(root, opts['datadir'], 'bash-completion', 'completions', 'hetbatch')
        if not os.path.exists(comp):
            fail('no bash completion %s' % comp)
        script = ('source "$1"\n'
                  't() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _hetbatch;'
                  ' echo "${COMPREPLY[*]}"; }\n'
                  't hetbatch swe\nt hetbatch sim --pol\nt hetbatch sim --policy jabas,simi\nt hetbatch --status-line ne\n')
        r = subprocess.run(['bash', '-c', script, 'bash', comp], capture_output=True, text=True)
        got = r.stdout.splitlines()
        if r.returncode != 0 or got != ['sweep', '--policy --policy-plugin', 'jabas,simigrad', 'never']:
            fail('completion gave %s (%s)' % (got, r.stderr))

        # the policy plugin API: the one header a plugin builds against
        hdr = os.path.join(root, opts['includedir'], 'hetbatch', 'policy.h')
        if not os.path.exists(hdr) or 'HB_POLICY_API_VERSION' not in open(hdr).read():
            fail('no installed plugin header %s' % hdr)

        # LICENSE matches meson.build's license
        lic = re.search(r"license\s*:\s*'([^']+)'", open(os.path.join(src, 'meson.build')).read()).group(1)
        head = open(os.path.join(src, 'LICENSE')).read(400)
        if lic != 'Apache-2.0' or 'Apache License' not in head or 'Version 2.0' not in head:
            fail('LICENSE does not hold the %s text meson.build declares' % lic)
        print('installed into %s: binary, %d gnuplot scripts, man page (%d subcommands), bash completion'
              % (dest, len(have), len(subs)))
    finally:
        shutil.rmtree(dest, ignore_errors=True)


if __name__ == '__main__':
    main()
