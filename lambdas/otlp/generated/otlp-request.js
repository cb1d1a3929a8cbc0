/*eslint-disable block-scoped-var, id-length, no-control-regex, no-magic-numbers, no-mixed-operators, no-prototype-builtins, no-redeclare, no-shadow, no-var, sort-vars, default-case, jsdoc/require-param*/
import $protobuf from "protobufjs/minimal.js";

const $Reader = $protobuf.Reader, $util = $protobuf.util;
const $Object = $util.global.Object, $undefined = $util.global.undefined, $Error = $util.global.Error, $RangeError = $util.global.RangeError;

const $root = $protobuf.roots["default"] || ($protobuf.roots["default"] = {});

export const opentelemetry = $root.opentelemetry = (() => {

    const opentelemetry = {};

    opentelemetry.proto = (function() {

        const proto = {};

        proto.trace = (function() {

            const trace = {};

            trace.v1 = (function() {

                const v1 = {};

                v1.TracesData = (function() {

                    const TracesData = function (p) {
                        this.resourceSpans = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    TracesData.prototype.resourceSpans = $util.emptyArray;

                    TracesData.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.trace.v1.TracesData();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.resourceSpans && m.resourceSpans.length))
                                        m.resourceSpans = [];
                                    m.resourceSpans.push($root.opentelemetry.proto.trace.v1.ResourceSpans.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return TracesData;
                })();

                v1.ResourceSpans = (function() {

                    const ResourceSpans = function (p) {
                        this.scopeSpans = [];
                        this.instrumentationLibrarySpans = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    ResourceSpans.prototype.resource = null;
                    ResourceSpans.prototype.scopeSpans = $util.emptyArray;
                    ResourceSpans.prototype.instrumentationLibrarySpans = $util.emptyArray;
                    ResourceSpans.prototype.schemaUrl = "";

                    ResourceSpans.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.trace.v1.ResourceSpans();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    m.resource = $root.opentelemetry.proto.resource.v1.Resource.decode(r, r.size(), $undefined, q + 1, m.resource);
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.scopeSpans && m.scopeSpans.length))
                                        m.scopeSpans = [];
                                    m.scopeSpans.push($root.opentelemetry.proto.trace.v1.ScopeSpans.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 1000: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.instrumentationLibrarySpans && m.instrumentationLibrarySpans.length))
                                        m.instrumentationLibrarySpans = [];
                                    m.instrumentationLibrarySpans.push($root.opentelemetry.proto.trace.v1.InstrumentationLibrarySpans.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 3: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.schemaUrl = v;
                                    else
                                        delete m.schemaUrl;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return ResourceSpans;
                })();

                v1.ScopeSpans = (function() {

                    const ScopeSpans = function (p) {
                        this.spans = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    ScopeSpans.prototype.scope = null;
                    ScopeSpans.prototype.spans = $util.emptyArray;
                    ScopeSpans.prototype.schemaUrl = "";

                    ScopeSpans.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.trace.v1.ScopeSpans();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    m.scope = $root.opentelemetry.proto.common.v1.InstrumentationScope.decode(r, r.size(), $undefined, q + 1, m.scope);
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.spans && m.spans.length))
                                        m.spans = [];
                                    m.spans.push($root.opentelemetry.proto.trace.v1.Span.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 3: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.schemaUrl = v;
                                    else
                                        delete m.schemaUrl;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return ScopeSpans;
                })();

                v1.InstrumentationLibrarySpans = (function() {

                    const InstrumentationLibrarySpans = function (p) {
                        this.spans = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    InstrumentationLibrarySpans.prototype.instrumentationLibrary = null;
                    InstrumentationLibrarySpans.prototype.spans = $util.emptyArray;
                    InstrumentationLibrarySpans.prototype.schemaUrl = "";

                    InstrumentationLibrarySpans.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.trace.v1.InstrumentationLibrarySpans();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    m.instrumentationLibrary = $root.opentelemetry.proto.common.v1.InstrumentationLibrary.decode(r, r.size(), $undefined, q + 1, m.instrumentationLibrary);
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.spans && m.spans.length))
                                        m.spans = [];
                                    m.spans.push($root.opentelemetry.proto.trace.v1.Span.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 3: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.schemaUrl = v;
                                    else
                                        delete m.schemaUrl;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return InstrumentationLibrarySpans;
                })();

                v1.Span = (function() {

                    const Span = function (p) {
                        this.attributes = [];
                        this.events = [];
                        this.links = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    Span.prototype.traceId = $util.newBuffer([]);
                    Span.prototype.spanId = $util.newBuffer([]);
                    Span.prototype.traceState = "";
                    Span.prototype.parentSpanId = $util.newBuffer([]);
                    Span.prototype.name = "";
                    Span.prototype.kind = 0;
                    Span.prototype.startTimeUnixNano = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    Span.prototype.endTimeUnixNano = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    Span.prototype.attributes = $util.emptyArray;
                    Span.prototype.droppedAttributesCount = 0;
                    Span.prototype.events = $util.emptyArray;
                    Span.prototype.droppedEventsCount = 0;
                    Span.prototype.links = $util.emptyArray;
                    Span.prototype.droppedLinksCount = 0;
                    Span.prototype.status = null;

                    Span.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.trace.v1.Span();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.bytes()).length)
                                        m.traceId = v;
                                    else
                                        delete m.traceId;
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.bytes()).length)
                                        m.spanId = v;
                                    else
                                        delete m.spanId;
                                    continue;
                                }
                            case 3: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.traceState = v;
                                    else
                                        delete m.traceState;
                                    continue;
                                }
                            case 4: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.bytes()).length)
                                        m.parentSpanId = v;
                                    else
                                        delete m.parentSpanId;
                                    continue;
                                }
                            case 5: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.name = v;
                                    else
                                        delete m.name;
                                    continue;
                                }
                            case 6: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.int32())
                                        m.kind = v;
                                    else
                                        delete m.kind;
                                    continue;
                                }
                            case 7: {
                                    if (u !== 1)
                                        break;
                                    if (typeof (v = r.fixed64()) === "object" ? v.low || v.high : v !== 0)
                                        m.startTimeUnixNano = v;
                                    else
                                        delete m.startTimeUnixNano;
                                    continue;
                                }
                            case 8: {
                                    if (u !== 1)
                                        break;
                                    if (typeof (v = r.fixed64()) === "object" ? v.low || v.high : v !== 0)
                                        m.endTimeUnixNano = v;
                                    else
                                        delete m.endTimeUnixNano;
                                    continue;
                                }
                            case 9: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.attributes && m.attributes.length))
                                        m.attributes = [];
                                    m.attributes.push($root.opentelemetry.proto.common.v1.KeyValue.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 10: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.uint32())
                                        m.droppedAttributesCount = v;
                                    else
                                        delete m.droppedAttributesCount;
                                    continue;
                                }
                            case 11: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.events && m.events.length))
                                        m.events = [];
                                    m.events.push($root.opentelemetry.proto.trace.v1.Span.Event.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 12: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.uint32())
                                        m.droppedEventsCount = v;
                                    else
                                        delete m.droppedEventsCount;
                                    continue;
                                }
                            case 13: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.links && m.links.length))
                                        m.links = [];
                                    m.links.push($root.opentelemetry.proto.trace.v1.Span.Link.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 14: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.uint32())
                                        m.droppedLinksCount = v;
                                    else
                                        delete m.droppedLinksCount;
                                    continue;
                                }
                            case 15: {
                                    if (u !== 2)
                                        break;
                                    m.status = $root.opentelemetry.proto.trace.v1.Status.decode(r, r.size(), $undefined, q + 1, m.status);
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    Span.SpanKind = (function() {
                        const valuesById = $Object.create(null), values = $Object.create(valuesById);
                        values[valuesById[0] = "SPAN_KIND_UNSPECIFIED"] = 0;
                        values[valuesById[1] = "SPAN_KIND_INTERNAL"] = 1;
                        values[valuesById[2] = "SPAN_KIND_SERVER"] = 2;
                        values[valuesById[3] = "SPAN_KIND_CLIENT"] = 3;
                        values[valuesById[4] = "SPAN_KIND_PRODUCER"] = 4;
                        values[valuesById[5] = "SPAN_KIND_CONSUMER"] = 5;
                        return values;
                    })();

                    Span.Event = (function() {

                        const Event = function (p) {
                            this.attributes = [];
                            if (p)
                                for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                    if (p[ks[i]] != null && ks[i] !== "__proto__")
                                        this[ks[i]] = p[ks[i]];
                        };

                        Event.prototype.timeUnixNano = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                        Event.prototype.name = "";
                        Event.prototype.attributes = $util.emptyArray;
                        Event.prototype.droppedAttributesCount = 0;

                        Event.decode = function (r, l, z, q, g) {
                            if (!(r instanceof $Reader))
                                r = $Reader.create(r);
                            if (q === $undefined)
                                q = 0;
                            if (q > $Reader.recursionLimit)
                                throw $Error("max depth exceeded");
                            var c, m, v;
                            if (l === $undefined)
                                c = r.len;
                            else {
                                c = r.pos + l;
                                if (c > r.len)
                                    throw $RangeError("index out of range");
                                l = r.len;
                                r.len = c;
                            }
                            m = g || new $root.opentelemetry.proto.trace.v1.Span.Event();
                            while (r.pos < c) {
                                var s = r.pos;
                                var t = r.tag();
                                if (t === z) {
                                    z = $undefined;
                                    break;
                                }
                                var u = t & 7;
                                switch (t >>>= 3) {
                                case 1: {
                                        if (u !== 1)
                                            break;
                                        if (typeof (v = r.fixed64()) === "object" ? v.low || v.high : v !== 0)
                                            m.timeUnixNano = v;
                                        else
                                            delete m.timeUnixNano;
                                        continue;
                                    }
                                case 2: {
                                        if (u !== 2)
                                            break;
                                        if ((v = r.stringVerify()).length)
                                            m.name = v;
                                        else
                                            delete m.name;
                                        continue;
                                    }
                                case 3: {
                                        if (u !== 2)
                                            break;
                                        if (!(m.attributes && m.attributes.length))
                                            m.attributes = [];
                                        m.attributes.push($root.opentelemetry.proto.common.v1.KeyValue.decode(r, r.size(), $undefined, q + 1));
                                        continue;
                                    }
                                case 4: {
                                        if (u !== 0)
                                            break;
                                        if (v = r.uint32())
                                            m.droppedAttributesCount = v;
                                        else
                                            delete m.droppedAttributesCount;
                                        continue;
                                    }
                                }
                                r.skipType(u, q, t);
                                if (!r.discardUnknown) {
                                    $util.makeProp(m, "$unknowns", false);
                                    (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                                }
                            }
                            if (l !== $undefined) {
                                if (r.pos !== c)
                                    throw $RangeError("index out of range");
                                r.len = l;
                            }
                            if (z !== $undefined)
                                throw $Error("missing end group");
                            return m;
                        };

                        return Event;
                    })();

                    Span.Link = (function() {

                        const Link = function (p) {
                            this.attributes = [];
                            if (p)
                                for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                    if (p[ks[i]] != null && ks[i] !== "__proto__")
                                        this[ks[i]] = p[ks[i]];
                        };

                        Link.prototype.traceId = $util.newBuffer([]);
                        Link.prototype.spanId = $util.newBuffer([]);
                        Link.prototype.traceState = "";
                        Link.prototype.attributes = $util.emptyArray;
                        Link.prototype.droppedAttributesCount = 0;

                        Link.decode = function (r, l, z, q, g) {
                            if (!(r instanceof $Reader))
                                r = $Reader.create(r);
                            if (q === $undefined)
                                q = 0;
                            if (q > $Reader.recursionLimit)
                                throw $Error("max depth exceeded");
                            var c, m, v;
                            if (l === $undefined)
                                c = r.len;
                            else {
                                c = r.pos + l;
                                if (c > r.len)
                                    throw $RangeError("index out of range");
                                l = r.len;
                                r.len = c;
                            }
                            m = g || new $root.opentelemetry.proto.trace.v1.Span.Link();
                            while (r.pos < c) {
                                var s = r.pos;
                                var t = r.tag();
                                if (t === z) {
                                    z = $undefined;
                                    break;
                                }
                                var u = t & 7;
                                switch (t >>>= 3) {
                                case 1: {
                                        if (u !== 2)
                                            break;
                                        if ((v = r.bytes()).length)
                                            m.traceId = v;
                                        else
                                            delete m.traceId;
                                        continue;
                                    }
                                case 2: {
                                        if (u !== 2)
                                            break;
                                        if ((v = r.bytes()).length)
                                            m.spanId = v;
                                        else
                                            delete m.spanId;
                                        continue;
                                    }
                                case 3: {
                                        if (u !== 2)
                                            break;
                                        if ((v = r.stringVerify()).length)
                                            m.traceState = v;
                                        else
                                            delete m.traceState;
                                        continue;
                                    }
                                case 4: {
                                        if (u !== 2)
                                            break;
                                        if (!(m.attributes && m.attributes.length))
                                            m.attributes = [];
                                        m.attributes.push($root.opentelemetry.proto.common.v1.KeyValue.decode(r, r.size(), $undefined, q + 1));
                                        continue;
                                    }
                                case 5: {
                                        if (u !== 0)
                                            break;
                                        if (v = r.uint32())
                                            m.droppedAttributesCount = v;
                                        else
                                            delete m.droppedAttributesCount;
                                        continue;
                                    }
                                }
                                r.skipType(u, q, t);
                                if (!r.discardUnknown) {
                                    $util.makeProp(m, "$unknowns", false);
                                    (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                                }
                            }
                            if (l !== $undefined) {
                                if (r.pos !== c)
                                    throw $RangeError("index out of range");
                                r.len = l;
                            }
                            if (z !== $undefined)
                                throw $Error("missing end group");
                            return m;
                        };

                        return Link;
                    })();

                    return Span;
                })();

                v1.Status = (function() {

                    const Status = function (p) {
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    Status.prototype.message = "";
                    Status.prototype.code = 0;

                    Status.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.trace.v1.Status();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.message = v;
                                    else
                                        delete m.message;
                                    continue;
                                }
                            case 3: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.int32())
                                        m.code = v;
                                    else
                                        delete m.code;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    Status.StatusCode = (function() {
                        const valuesById = $Object.create(null), values = $Object.create(valuesById);
                        values[valuesById[0] = "STATUS_CODE_UNSET"] = 0;
                        values[valuesById[1] = "STATUS_CODE_OK"] = 1;
                        values[valuesById[2] = "STATUS_CODE_ERROR"] = 2;
                        return values;
                    })();

                    return Status;
                })();

                return v1;
            })();

            return trace;
        })();

        proto.common = (function() {

            const common = {};

            common.v1 = (function() {

                const v1 = {};

                v1.AnyValue = (function() {

                    const AnyValue = function (p) {
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    AnyValue.prototype.stringValue = null;
                    AnyValue.prototype.boolValue = null;
                    AnyValue.prototype.intValue = null;
                    AnyValue.prototype.doubleValue = null;
                    AnyValue.prototype.arrayValue = null;
                    AnyValue.prototype.kvlistValue = null;
                    AnyValue.prototype.bytesValue = null;

                    let $oneOfFields;

                    $Object.defineProperty(AnyValue.prototype, "value", {
                        get: $util.oneOfGetter($oneOfFields = ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"]),
                        set: $util.oneOfSetter($oneOfFields)
                    });

                    AnyValue.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.common.v1.AnyValue();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    m.stringValue = r.stringVerify();
                                    m.value = "stringValue";
                                    continue;
                                }
                            case 2: {
                                    if (u !== 0)
                                        break;
                                    m.boolValue = r.bool();
                                    m.value = "boolValue";
                                    continue;
                                }
                            case 3: {
                                    if (u !== 0)
                                        break;
                                    m.intValue = r.int64();
                                    m.value = "intValue";
                                    continue;
                                }
                            case 4: {
                                    if (u !== 1)
                                        break;
                                    m.doubleValue = r.double();
                                    m.value = "doubleValue";
                                    continue;
                                }
                            case 5: {
                                    if (u !== 2)
                                        break;
                                    m.arrayValue = $root.opentelemetry.proto.common.v1.ArrayValue.decode(r, r.size(), $undefined, q + 1, m.arrayValue);
                                    m.value = "arrayValue";
                                    continue;
                                }
                            case 6: {
                                    if (u !== 2)
                                        break;
                                    m.kvlistValue = $root.opentelemetry.proto.common.v1.KeyValueList.decode(r, r.size(), $undefined, q + 1, m.kvlistValue);
                                    m.value = "kvlistValue";
                                    continue;
                                }
                            case 7: {
                                    if (u !== 2)
                                        break;
                                    m.bytesValue = r.bytes();
                                    m.value = "bytesValue";
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return AnyValue;
                })();

                v1.ArrayValue = (function() {

                    const ArrayValue = function (p) {
                        this.values = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    ArrayValue.prototype.values = $util.emptyArray;

                    ArrayValue.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.common.v1.ArrayValue();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.values && m.values.length))
                                        m.values = [];
                                    m.values.push($root.opentelemetry.proto.common.v1.AnyValue.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return ArrayValue;
                })();

                v1.KeyValueList = (function() {

                    const KeyValueList = function (p) {
                        this.values = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    KeyValueList.prototype.values = $util.emptyArray;

                    KeyValueList.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.common.v1.KeyValueList();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.values && m.values.length))
                                        m.values = [];
                                    m.values.push($root.opentelemetry.proto.common.v1.KeyValue.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return KeyValueList;
                })();

                v1.KeyValue = (function() {

                    const KeyValue = function (p) {
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    KeyValue.prototype.key = "";
                    KeyValue.prototype.value = null;

                    KeyValue.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.common.v1.KeyValue();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.key = v;
                                    else
                                        delete m.key;
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    m.value = $root.opentelemetry.proto.common.v1.AnyValue.decode(r, r.size(), $undefined, q + 1, m.value);
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return KeyValue;
                })();

                v1.InstrumentationLibrary = (function() {

                    const InstrumentationLibrary = function (p) {
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    InstrumentationLibrary.prototype.name = "";
                    InstrumentationLibrary.prototype.version = "";

                    InstrumentationLibrary.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.common.v1.InstrumentationLibrary();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.name = v;
                                    else
                                        delete m.name;
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.version = v;
                                    else
                                        delete m.version;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return InstrumentationLibrary;
                })();

                v1.InstrumentationScope = (function() {

                    const InstrumentationScope = function (p) {
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    InstrumentationScope.prototype.name = "";
                    InstrumentationScope.prototype.version = "";

                    InstrumentationScope.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.common.v1.InstrumentationScope();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.name = v;
                                    else
                                        delete m.name;
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.version = v;
                                    else
                                        delete m.version;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return InstrumentationScope;
                })();

                return v1;
            })();

            return common;
        })();

        proto.resource = (function() {

            const resource = {};

            resource.v1 = (function() {

                const v1 = {};

                v1.Resource = (function() {

                    const Resource = function (p) {
                        this.attributes = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    Resource.prototype.attributes = $util.emptyArray;
                    Resource.prototype.droppedAttributesCount = 0;

                    Resource.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.resource.v1.Resource();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.attributes && m.attributes.length))
                                        m.attributes = [];
                                    m.attributes.push($root.opentelemetry.proto.common.v1.KeyValue.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 2: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.uint32())
                                        m.droppedAttributesCount = v;
                                    else
                                        delete m.droppedAttributesCount;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return Resource;
                })();

                return v1;
            })();

            return resource;
        })();

        proto.logs = (function() {

            const logs = {};

            logs.v1 = (function() {

                const v1 = {};

                v1.LogsData = (function() {

                    const LogsData = function (p) {
                        this.resourceLogs = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    LogsData.prototype.resourceLogs = $util.emptyArray;

                    LogsData.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.logs.v1.LogsData();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.resourceLogs && m.resourceLogs.length))
                                        m.resourceLogs = [];
                                    m.resourceLogs.push($root.opentelemetry.proto.logs.v1.ResourceLogs.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return LogsData;
                })();

                v1.ResourceLogs = (function() {

                    const ResourceLogs = function (p) {
                        this.scopeLogs = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    ResourceLogs.prototype.resource = null;
                    ResourceLogs.prototype.scopeLogs = $util.emptyArray;
                    ResourceLogs.prototype.schemaUrl = "";

                    ResourceLogs.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.logs.v1.ResourceLogs();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    m.resource = $root.opentelemetry.proto.resource.v1.Resource.decode(r, r.size(), $undefined, q + 1, m.resource);
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.scopeLogs && m.scopeLogs.length))
                                        m.scopeLogs = [];
                                    m.scopeLogs.push($root.opentelemetry.proto.logs.v1.ScopeLogs.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 3: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.schemaUrl = v;
                                    else
                                        delete m.schemaUrl;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return ResourceLogs;
                })();

                v1.ScopeLogs = (function() {

                    const ScopeLogs = function (p) {
                        this.logRecords = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    ScopeLogs.prototype.scope = null;
                    ScopeLogs.prototype.logRecords = $util.emptyArray;
                    ScopeLogs.prototype.schemaUrl = "";

                    ScopeLogs.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.logs.v1.ScopeLogs();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 2)
                                        break;
                                    m.scope = $root.opentelemetry.proto.common.v1.InstrumentationScope.decode(r, r.size(), $undefined, q + 1, m.scope);
                                    continue;
                                }
                            case 2: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.logRecords && m.logRecords.length))
                                        m.logRecords = [];
                                    m.logRecords.push($root.opentelemetry.proto.logs.v1.LogRecord.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 3: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.schemaUrl = v;
                                    else
                                        delete m.schemaUrl;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return ScopeLogs;
                })();

                v1.SeverityNumber = (function() {
                    const valuesById = $Object.create(null), values = $Object.create(valuesById);
                    values[valuesById[0] = "SEVERITY_NUMBER_UNSPECIFIED"] = 0;
                    values[valuesById[1] = "SEVERITY_NUMBER_TRACE"] = 1;
                    values[valuesById[2] = "SEVERITY_NUMBER_TRACE2"] = 2;
                    values[valuesById[3] = "SEVERITY_NUMBER_TRACE3"] = 3;
                    values[valuesById[4] = "SEVERITY_NUMBER_TRACE4"] = 4;
                    values[valuesById[5] = "SEVERITY_NUMBER_DEBUG"] = 5;
                    values[valuesById[6] = "SEVERITY_NUMBER_DEBUG2"] = 6;
                    values[valuesById[7] = "SEVERITY_NUMBER_DEBUG3"] = 7;
                    values[valuesById[8] = "SEVERITY_NUMBER_DEBUG4"] = 8;
                    values[valuesById[9] = "SEVERITY_NUMBER_INFO"] = 9;
                    values[valuesById[10] = "SEVERITY_NUMBER_INFO2"] = 10;
                    values[valuesById[11] = "SEVERITY_NUMBER_INFO3"] = 11;
                    values[valuesById[12] = "SEVERITY_NUMBER_INFO4"] = 12;
                    values[valuesById[13] = "SEVERITY_NUMBER_WARN"] = 13;
                    values[valuesById[14] = "SEVERITY_NUMBER_WARN2"] = 14;
                    values[valuesById[15] = "SEVERITY_NUMBER_WARN3"] = 15;
                    values[valuesById[16] = "SEVERITY_NUMBER_WARN4"] = 16;
                    values[valuesById[17] = "SEVERITY_NUMBER_ERROR"] = 17;
                    values[valuesById[18] = "SEVERITY_NUMBER_ERROR2"] = 18;
                    values[valuesById[19] = "SEVERITY_NUMBER_ERROR3"] = 19;
                    values[valuesById[20] = "SEVERITY_NUMBER_ERROR4"] = 20;
                    values[valuesById[21] = "SEVERITY_NUMBER_FATAL"] = 21;
                    values[valuesById[22] = "SEVERITY_NUMBER_FATAL2"] = 22;
                    values[valuesById[23] = "SEVERITY_NUMBER_FATAL3"] = 23;
                    values[valuesById[24] = "SEVERITY_NUMBER_FATAL4"] = 24;
                    return values;
                })();

                v1.LogRecordFlags = (function() {
                    const valuesById = $Object.create(null), values = $Object.create(valuesById);
                    values[valuesById[0] = "LOG_RECORD_FLAGS_DO_NOT_USE"] = 0;
                    values[valuesById[255] = "LOG_RECORD_FLAGS_TRACE_FLAGS_MASK"] = 255;
                    return values;
                })();

                v1.LogRecord = (function() {

                    const LogRecord = function (p) {
                        this.attributes = [];
                        if (p)
                            for (var ks = $Object.keys(p), i = 0; i < ks.length; ++i)
                                if (p[ks[i]] != null && ks[i] !== "__proto__")
                                    this[ks[i]] = p[ks[i]];
                    };

                    LogRecord.prototype.timeUnixNano = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    LogRecord.prototype.observedTimeUnixNano = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    LogRecord.prototype.severityNumber = 0;
                    LogRecord.prototype.severityText = "";
                    LogRecord.prototype.body = null;
                    LogRecord.prototype.attributes = $util.emptyArray;
                    LogRecord.prototype.droppedAttributesCount = 0;
                    LogRecord.prototype.flags = 0;
                    LogRecord.prototype.traceId = $util.newBuffer([]);
                    LogRecord.prototype.spanId = $util.newBuffer([]);
                    LogRecord.prototype.eventName = "";

                    LogRecord.decode = function (r, l, z, q, g) {
                        if (!(r instanceof $Reader))
                            r = $Reader.create(r);
                        if (q === $undefined)
                            q = 0;
                        if (q > $Reader.recursionLimit)
                            throw $Error("max depth exceeded");
                        var c, m, v;
                        if (l === $undefined)
                            c = r.len;
                        else {
                            c = r.pos + l;
                            if (c > r.len)
                                throw $RangeError("index out of range");
                            l = r.len;
                            r.len = c;
                        }
                        m = g || new $root.opentelemetry.proto.logs.v1.LogRecord();
                        while (r.pos < c) {
                            var s = r.pos;
                            var t = r.tag();
                            if (t === z) {
                                z = $undefined;
                                break;
                            }
                            var u = t & 7;
                            switch (t >>>= 3) {
                            case 1: {
                                    if (u !== 1)
                                        break;
                                    if (typeof (v = r.fixed64()) === "object" ? v.low || v.high : v !== 0)
                                        m.timeUnixNano = v;
                                    else
                                        delete m.timeUnixNano;
                                    continue;
                                }
                            case 11: {
                                    if (u !== 1)
                                        break;
                                    if (typeof (v = r.fixed64()) === "object" ? v.low || v.high : v !== 0)
                                        m.observedTimeUnixNano = v;
                                    else
                                        delete m.observedTimeUnixNano;
                                    continue;
                                }
                            case 2: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.int32())
                                        m.severityNumber = v;
                                    else
                                        delete m.severityNumber;
                                    continue;
                                }
                            case 3: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.severityText = v;
                                    else
                                        delete m.severityText;
                                    continue;
                                }
                            case 5: {
                                    if (u !== 2)
                                        break;
                                    m.body = $root.opentelemetry.proto.common.v1.AnyValue.decode(r, r.size(), $undefined, q + 1, m.body);
                                    continue;
                                }
                            case 6: {
                                    if (u !== 2)
                                        break;
                                    if (!(m.attributes && m.attributes.length))
                                        m.attributes = [];
                                    m.attributes.push($root.opentelemetry.proto.common.v1.KeyValue.decode(r, r.size(), $undefined, q + 1));
                                    continue;
                                }
                            case 7: {
                                    if (u !== 0)
                                        break;
                                    if (v = r.uint32())
                                        m.droppedAttributesCount = v;
                                    else
                                        delete m.droppedAttributesCount;
                                    continue;
                                }
                            case 8: {
                                    if (u !== 5)
                                        break;
                                    if (v = r.fixed32())
                                        m.flags = v;
                                    else
                                        delete m.flags;
                                    continue;
                                }
                            case 9: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.bytes()).length)
                                        m.traceId = v;
                                    else
                                        delete m.traceId;
                                    continue;
                                }
                            case 10: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.bytes()).length)
                                        m.spanId = v;
                                    else
                                        delete m.spanId;
                                    continue;
                                }
                            case 12: {
                                    if (u !== 2)
                                        break;
                                    if ((v = r.stringVerify()).length)
                                        m.eventName = v;
                                    else
                                        delete m.eventName;
                                    continue;
                                }
                            }
                            r.skipType(u, q, t);
                            if (!r.discardUnknown) {
                                $util.makeProp(m, "$unknowns", false);
                                (m.$unknowns || (m.$unknowns = [])).push(r.raw(s, r.pos));
                            }
                        }
                        if (l !== $undefined) {
                            if (r.pos !== c)
                                throw $RangeError("index out of range");
                            r.len = l;
                        }
                        if (z !== $undefined)
                            throw $Error("missing end group");
                        return m;
                    };

                    return LogRecord;
                })();

                return v1;
            })();

            return logs;
        })();

        return proto;
    })();

    return opentelemetry;
})();

export {
  $root as default
};
