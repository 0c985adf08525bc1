#!/usr/bin/env bash
# Certificates for the signer's mutual TLS (docs/signer.md, "Transport"): a private CA, the signer's server
# certificate for the names its clients connect to, and one client certificate the workers present. Keys are EC P-256
# and never leave OUT_DIR; keep ca.key offline once the certificates are made (it is only needed to make more).
#
#   scripts/signer/make-certs.sh OUT_DIR SIGNER_NAME [MORE_NAMES...]
#   e.g. scripts/signer/make-certs.sh ./signer-tls stablepay-signer stablepay-signer.stablepay.svc
#
# Names that are IP addresses go in as IP subject alternative names. Certificates last DAYS (default 397) days.
set -euo pipefail
out=${1:?usage: make-certs.sh OUT_DIR SIGNER_NAME [MORE_NAMES...]}
shift
[ $# -ge 1 ] || { echo "usage: make-certs.sh OUT_DIR SIGNER_NAME [MORE_NAMES...]" >&2; exit 2; }
days=${DAYS:-397}
mkdir -p "$out"
umask 077
san=""
for name in "$@"; do
  if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then san+="IP:$name,"; else san+="DNS:$name,"; fi
done
san=${san%,}

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key "$out/ca.key"
openssl req -x509 -new -key "$out/ca.key" -subj "/CN=stablepay signer CA" -days "$days" -sha256 \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out "$out/ca.crt"

issue() { # NAME CN EXTENSIONS
  key "$out/$1.key"
  openssl req -new -key "$out/$1.key" -subj "/CN=$2" -out "$out/$1.csr"
  printf '%s\n' "$3" >"$out/$1.ext"
  openssl x509 -req -in "$out/$1.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial -days "$days" -sha256 \
    -extfile "$out/$1.ext" -out "$out/$1.crt" 2>/dev/null
  rm -f "$out/$1.csr" "$out/$1.ext"
}
issue signer "$1" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$san"
issue worker "stablepay worker" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
rm -f "$out/ca.srl"
echo "wrote $out/{ca,signer,worker}.{crt,key} (signer names: $san)"
