// Saved sign-ins' IndexedDB (issue 22): a copy of an origin's databases read in an isolated
// world, and the same put back. Both run in an isolated world of hands' own: the page's scripts
// cannot see the values pass, nor replace `indexedDB` under them.
//
// Keys and values cross as tagged JSON, so every structured-clone type below comes back as it
// was: a plain JSON value stands for itself (null, booleans, strings, finite numbers but -0);
// anything else is an object {"$": TAG, ...}. Objects met twice (shared or cyclic) are written
// once with an "id" and then as {"$": "ref", "v": id}.
//
// Tags: num (NaN, ±Infinity, -0), undef, big (BigInt), date, re (RegExp), arr, obj, map, set,
// ab (ArrayBuffer), view (typed arrays and DataView), blob, file, box (Boolean/Number/String
// objects), err (Error). Anything else (a CryptoKey, a FileSystemHandle…) is `skip`: the
// record keeps its place with that value left out, counted in `skipped`.
({
  save: async function () {
    const b64 = (buf) => {
      const bytes = new Uint8Array(buf);
      let s = '';
      for (let i = 0; i < bytes.length; i += 0x8000) {
        s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
      }
      return btoa(s);
    };
    let skipped = 0;
    const encode = async (value, seen) => {
      switch (typeof value) {
        case 'string': case 'boolean': return value;
        case 'undefined': return { $: 'undef' };
        case 'bigint': return { $: 'big', v: value.toString() };
        case 'number':
          if (Number.isFinite(value) && !Object.is(value, -0)) return value;
          return { $: 'num', v: Object.is(value, -0) ? '-0' : String(value) };
        case 'object': break;
        default: skipped++; return { $: 'skip' };
      }
      if (value === null) return null;
      if (seen.has(value)) return { $: 'ref', v: seen.get(value) };
      const id = seen.size;
      seen.set(value, id);
      const tag = Object.prototype.toString.call(value).slice(8, -1);
      if (Array.isArray(value)) {
        const v = [];
        for (const item of value) v.push(await encode(item, seen));
        return { $: 'arr', id, v };
      }
      switch (tag) {
        case 'Date': return { $: 'date', id, v: String(value.getTime()) };
        case 'RegExp': return { $: 're', id, src: value.source, flags: value.flags };
        case 'Map': {
          const v = [];
          for (const [k, x] of value) v.push([await encode(k, seen), await encode(x, seen)]);
          return { $: 'map', id, v };
        }
        case 'Set': {
          const v = [];
          for (const x of value) v.push(await encode(x, seen));
          return { $: 'set', id, v };
        }
        case 'ArrayBuffer': return { $: 'ab', id, v: b64(value) };
        case 'Boolean': case 'Number': case 'String':
          return { $: 'box', id, t: tag, v: await encode(value.valueOf(), seen) };
        case 'File':
          return { $: 'file', id, name: value.name, type: value.type,
                   modified: value.lastModified, v: b64(await value.arrayBuffer()) };
        case 'Blob': return { $: 'blob', id, type: value.type, v: b64(await value.arrayBuffer()) };
        case 'Error':
          return { $: 'err', id, name: value.name, message: value.message };
        case 'Object': {
          const v = [];
          for (const k of Object.keys(value)) v.push([k, await encode(value[k], seen)]);
          return { $: 'obj', id, v };
        }
      }
      if (ArrayBuffer.isView(value)) {
        return { $: 'view', id, t: tag, v: b64(value.buffer.slice(
          value.byteOffset, value.byteOffset + value.byteLength)) };
      }
      skipped++;
      return { $: 'skip' };
    };
    const done = (request) => new Promise((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    const databases = [];
    for (const info of await indexedDB.databases()) {
      // Opened at no version: an existing database is never upgraded by a read.
      const open = indexedDB.open(info.name);
      let created = false;
      open.onupgradeneeded = () => { created = true; open.transaction.abort(); };
      let db;
      try { db = await done(open); } catch (e) { if (created) continue; throw e; }
      try {
        // Everything is read in one transaction first, then encoded: reading a Blob waits
        // on more than IndexedDB, which would let the transaction end in between.
        const names = Array.from(db.objectStoreNames);
        const tx = names.length ? db.transaction(names, 'readonly') : null;
        const raw = await Promise.all(names.map(async (name) => {
          const store = tx.objectStore(name);
          const indexes = Array.from(store.indexNames).map((n) => {
            const index = store.index(n);
            return { name: n, keyPath: index.keyPath, unique: index.unique,
                     multiEntry: index.multiEntry };
          });
          const [keys, values] = await Promise.all([
            done(store.getAllKeys()), done(store.getAll())]);
          return { name, keyPath: store.keyPath, autoIncrement: store.autoIncrement,
                   indexes, keys, values };
        }));
        const stores = [];
        for (const s of raw) {
          const records = [];
          for (let i = 0; i < s.keys.length; i++) {
            records.push([await encode(s.keys[i], new Map()),
                          await encode(s.values[i], new Map())]);
          }
          stores.push({ name: s.name, keyPath: s.keyPath, autoIncrement: s.autoIncrement,
                        indexes: s.indexes, records });
        }
        databases.push({ name: db.name, version: db.version, stores });
      } finally {
        db.close();
      }
    }
    return JSON.stringify({ origin: location.origin, databases, skipped });
  },

  // Fills the saved databases of this document's origin once per tab (a sessionStorage
  // marker), each in the upgrade transaction of its own first open: IndexedDB runs the opens of
  // one database in order, so a page that opens it after this script started waits until the
  // records are in. A database that exists already is left alone.
  seed: function (saved, marker) {
    const dbs = saved[location.origin];
    if (!dbs) return;
    try {
      if (sessionStorage.getItem(marker)) return;
      sessionStorage.setItem(marker, '1');
    } catch (e) { return; }
    const VIEWS = /^(Big)?(Ui|I)nt(8|16|32|64)Array$|^Uint8ClampedArray$|^Float(16|32|64)Array$/;
    const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
    const decode = (x, seen) => {
      if (x === null || typeof x !== 'object') return x;
      let out;
      switch (x.$) {
        case 'ref': return seen.get(x.v);
        case 'undef': case 'skip': return undefined;
        case 'num': return x.v === '-0' ? -0 : Number(x.v);
        case 'big': return BigInt(x.v);
        case 'date': out = new Date(Number(x.v)); break;
        case 're': out = new RegExp(x.src, x.flags); break;
        case 'ab': out = bytes(x.v).buffer; break;
        case 'view': {
          const buf = bytes(x.v).buffer;
          if (x.t === 'DataView') out = new DataView(buf);
          else if (VIEWS.test(x.t)) out = new globalThis[x.t](buf);
          else return undefined;
          break;
        }
        case 'blob': out = new Blob([bytes(x.v)], { type: x.type }); break;
        case 'file':
          out = new File([bytes(x.v)], x.name, { type: x.type, lastModified: x.modified });
          break;
        case 'box': out = Object(decode(x.v, seen)); break;
        case 'err': out = new Error(x.message); out.name = x.name; break;
        case 'arr':
          out = []; seen.set(x.id, out);
          for (const item of x.v) out.push(decode(item, seen));
          return out;
        case 'obj':
          out = {}; seen.set(x.id, out);
          for (const [k, v] of x.v) out[k] = decode(v, seen);
          return out;
        case 'map':
          out = new Map(); seen.set(x.id, out);
          for (const [k, v] of x.v) out.set(decode(k, seen), decode(v, seen));
          return out;
        case 'set':
          out = new Set(); seen.set(x.id, out);
          for (const v of x.v) out.add(decode(v, seen));
          return out;
        default: return undefined;
      }
      seen.set(x.id, out);
      return out;
    };
    for (const saved of dbs) {
      const open = indexedDB.open(saved.name, Math.max(1, saved.version));
      open.onupgradeneeded = (event) => {
        // Only into a database that did not exist: never over the page's own.
        if (event.oldVersion !== 0) { open.transaction.abort(); return; }
        const db = open.result;
        for (const s of saved.stores) {
          const store = db.createObjectStore(s.name, {
            keyPath: s.keyPath === null ? undefined : s.keyPath,
            autoIncrement: s.autoIncrement,
          });
          for (const i of s.indexes) {
            store.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
          }
          for (const [k, v] of s.records) {
            const value = decode(v, new Map());
            if (s.keyPath === null) store.put(value, decode(k, new Map()));
            else store.put(value);
          }
        }
      };
      open.onsuccess = () => {
        const db = open.result;
        db.onversionchange = () => db.close();
        db.close();
      };
      open.onerror = (e) => e.preventDefault();
    }
  },
})
