from packaging.version import Version
from configparser import ConfigParser
import setuptools, shlex
assert Version(setuptools.__version__) >= Version('36.2')

# note: all settings are in settings.ini; edit there, not here
config = ConfigParser(delimiters=['='])
config.read('settings.ini', encoding='utf-8')
cfg = config['DEFAULT']

cfg_keys = 'version description keywords author author_email'.split()
expected = cfg_keys + "lib_name user branch license status min_python audience language".split()
for o in expected: assert o in cfg, "missing expected setting: {}".format(o)
setup_cfg = {o: cfg[o] for o in cfg_keys}

licenses = {'apache2': 'Apache-2.0', 'mit': 'MIT'}  # SPDX expressions: setuptools deprecates license classifiers
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable',
            '6 - Mature', '7 - Inactive']
py_versions = '3.9 3.10 3.11 3.12 3.13'.split()

requirements = shlex.split(cfg.get('requirements', ''))
if cfg.get('pip_requirements'): requirements += shlex.split(cfg.get('pip_requirements', ''))
min_python = cfg['min_python']
lic = licenses.get(cfg['license'].lower(), cfg['license'])
# setuptools 77 writes an SPDX License-Expression; an older one takes the legacy License field
license_field = {'license_expression' if Version(setuptools.__version__) >= Version('77') else 'license': lic}
dev_requirements = shlex.split(cfg.get('dev_requirements', ''))

setuptools.setup(
    name=cfg['lib_name'],
    **license_field,
    classifiers=['Development Status :: ' + statuses[int(cfg['status']) - 1],
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'Natural Language :: ' + cfg['language'].title()]
                + ['Programming Language :: Python :: ' + o for o in py_versions[py_versions.index(min_python):]],
    url=cfg['git_url'],
    packages=setuptools.find_packages(include=[cfg['lib_name'], cfg['lib_name'] + '.*']),
    include_package_data=True,
    install_requires=requirements,
    extras_require={'dev': dev_requirements},
    dependency_links=cfg.get('dep_links', '').split(),
    python_requires='>=' + cfg['min_python'],
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'nbdev': [f'{cfg.get("lib_path")}={cfg.get("lib_path")}._modidx:d']},
    **setup_cfg)
