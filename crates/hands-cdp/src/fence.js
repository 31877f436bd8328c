// The page fence of hands (see PAGE_FENCE_JS in events.rs): WebRTC, the Payment Request API and
// FedCM made absent before any script of the page runs. Non-configurable, so the page cannot put
// them back; every new document (frames, pop-ups' first documents) runs this again.
(() => {
  'use strict';
  const gone = (owner, name) => {
    if (!owner) return;
    try {
      Object.defineProperty(owner, name, { value: undefined, writable: false, configurable: false });
    } catch (e) { /* already fenced */ }
  };
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCIceCandidate',
    'RTCSessionDescription', 'RTCDataChannel', 'RTCRtpSender', 'RTCRtpReceiver',
    'RTCRtpTransceiver', 'RTCDtlsTransport', 'RTCIceTransport', 'RTCSctpTransport',
    'PaymentRequest', 'PaymentResponse', 'PaymentAddress', 'PaymentMethodChangeEvent',
    'PaymentRequestUpdateEvent', 'IdentityCredential', 'IdentityProvider',
    'IdentityCredentialError', 'NavigatorLogin']) {
    gone(globalThis, name);
  }
  const creds = globalThis.CredentialsContainer && CredentialsContainer.prototype;
  if (creds) {
    for (const method of ['get', 'create']) {
      const original = creds[method];
      if (typeof original !== 'function') continue;
      const fenced = {
        [method](options) {
          if (options && (options.identity || options.federated)) {
            return Promise.reject(new DOMException('FedCM is not supported.', 'NotSupportedError'));
          }
          return original.apply(this, arguments);
        },
      }[method];
      try {
        Object.defineProperty(creds, method, { value: fenced, writable: false, configurable: false });
      } catch (e) { /* already fenced */ }
    }
  }
  const nav = globalThis.Navigator && Navigator.prototype;
  if (nav) gone(nav, 'login');
})();
