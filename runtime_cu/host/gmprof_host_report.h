// gmprof host runtime: the report file at exit (raw records, schema gmprof.raw/1, that
// gmprof/program/records.py decodes) and the JSON it is written in (included by gmprof_host.cpp
// only, inside its unnamed namespace, where it was: one translation unit, split for reading).

// ---------------------------------------------------------------- JSON

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += (char)c;
    }
  }
  return out + "\"";
}

std::string hex(const void *p, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string out;
  const unsigned char *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) {
    out += d[b[i] >> 4];
    out += d[b[i] & 15];
  }
  return out;
}

// ---------------------------------------------------------------- the report file

std::string expand_output(const std::string &pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%' || i + 1 >= pattern.size()) {
      out += c;
      continue;
    }
    char n = pattern[++i];
    if (n == 'p') {
      out += std::to_string((long long)getpid());
    } else if (n == 'h') {
      char host[256] = "";
      gethostname(host, sizeof host - 1);
      out += host;
    } else if (n == 'q' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
      size_t close = pattern.find('}', i + 2);
      if (close == std::string::npos) {
        out += "%q";
        continue;
      }
      const char *v = getenv(pattern.substr(i + 2, close - i - 2).c_str());
      out += v ? v : "";
      i = close;
    } else if (n == '%') {
      out += '%';
    } else {
      out += '%';
      out += n;
    }
  }
  return out;
}

void write_report() {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  load_options(s);
  std::string path = expand_output(s.options.output);
  // the counts file beside it (gmprof_host_counts.h): both are written to temporary names and
  // renamed, the counts file first, so that a report file never names a half-written one
  const std::string counts_path = counts::path_for(path);
  std::string tmp = path + ".tmp." + std::to_string((long long)getpid());
  std::string counts_tmp = counts_path + ".tmp." + std::to_string((long long)getpid());
  FILE *f = fopen(tmp.c_str(), "w");
  FILE *cf = f ? fopen(counts_tmp.c_str(), "wb") : nullptr;
  if (!f || !cf) {
    fprintf(stderr, "gmprof: error: cannot write the report file %s: %s\n",
            f ? counts_path.c_str() : path.c_str(), strerror(errno));
    if (f) {
      fclose(f);
      unlink(tmp.c_str());
    }
    return;
  }
  // this run's id, in the counts file's header and the JSON: a counts file of another run (the
  // same pid on another day, a file copied without its partner) is refused when decoded
  char id[17];
  snprintf(id, sizeof id, "%016llx",
           (unsigned long long)std::chrono::system_clock::now().time_since_epoch().count() *
                   0x9e3779b97f4a7c15ull ^
               ((unsigned long long)getpid() << 40) ^ (unsigned long long)(uintptr_t)&s);
  counts::Writer cw(cf, id);
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  fprintf(f, "{\"schema\": \"gmprof.raw/1\", \"pid\": %lld, \"host\": %s, ", (long long)getpid(),
          json_string(host).c_str());
#if defined(GMPROF_CPU)
  fprintf(f, "\"backend\": \"cpu\", ");
#else
  fprintf(f, "\"backend\": \"gpu\", ");
#endif
  fprintf(f, "\"options\": {\"kernel\": %s, \"skip\": %lld, \"count\": %lld}, ",
          json_string(s.options.kernel).c_str(), s.options.skip, s.options.count);
  // a launch captured into a graph ran once per replay (its fold counted them)
  // (one captured launch may have several records: a graph instantiated twice, a node given
  // new parameters)
  long long replays = 0;
  std::map<long long, bool> captured_launches;
  for (auto &kv : s.groups)
    for (const LaunchRec &r : kv.second.launches)
      if (r.captured) {
        replays += (long long)r.runs;
        captured_launches[r.index] = true;
      }
  const long long captured_recs = (long long)captured_launches.size();
  const long long profiled = s.profiled + replays;
  fprintf(f, "\"launches\": %lld, \"matching\": %lld, \"profiled\": %lld, ",
          s.seen - captured_recs + replays, s.matching - captured_recs + replays, profiled);
  fprintf(f, "\"devices\": {");
  bool first = true;
  for (auto &d : s.device_names) {
    fprintf(f, "%s\"%d\": %s", first ? "" : ", ", d.first, json_string(d.second).c_str());
    first = false;
  }
  fprintf(f, "}, \"not_instrumented\": {");
  first = true;
  for (auto &n : s.not_instrumented) {
    fprintf(f, "%s%s: %lld", first ? "" : ", ", json_string(n.first).c_str(), n.second);
    first = false;
  }
  // the marked nodes that no instantiation profiled (in graphs CUDA cannot clone, in conditional
  // nodes' bodies, in graphs never instantiated): made during a capture, not profiled
  for (auto &kv : s.marks)
    if (!kv.second.profiled) ++s.captured[kv.second.k->desc->name];
  s.marks.clear();
  fprintf(f, "}, \"captured\": {");
  first = true;
  for (auto &n : s.captured) {
    fprintf(f, "%s%s: %lld", first ? "" : ", ", json_string(n.first).c_str(), n.second);
    first = false;
  }
  fprintf(f, "}, \"device_launches\": [");
  first = true;
  for (auto &n : s.device_launches) {
    const size_t tab = n.first.find('\t');
    fprintf(f, "%s{\"parent\": %s, \"child\": %s, \"count\": %llu}", first ? "" : ", ",
            json_string(n.first.substr(0, tab)).c_str(),
            json_string(tab == std::string::npos ? "" : n.first.substr(tab + 1)).c_str(),
            n.second);
    first = false;
  }
  fprintf(f, "], \"failed\": [");
  for (size_t i = 0; i < s.failed.size(); ++i) {
    const FailedRec &r = s.failed[i];
    fprintf(f, "%s{\"kernel\": %s, \"index\": %lld, \"grid\": [%u, %u, %u], "
            "\"block\": [%u, %u, %u], \"error\": %s}", i ? ", " : "",
            json_string(r.kernel).c_str(), r.index, r.grid[0], r.grid[1], r.grid[2], r.block[0],
            r.block[1], r.block[2], json_string(r.error).c_str());
  }
  std::vector<std::string> notes = s.notes;
  for (const std::string &key : s.group_order) {
    const Group &g = s.groups[key];
    if (g.sink && g.grids_total)
      notes.push_back(std::to_string(g.grids_total) + " grid(s) of " + g.kernel->name +
                      " were launched from the device by a kernel gmprof did not expect to "
                      "launch it (through a path its analysis missed): they ran its child "
                      "copy, and their accesses are not counted");
  }
  fprintf(f, "], \"notes\": [");
  for (size_t i = 0; i < notes.size(); ++i)
    fprintf(f, "%s%s", i ? ", " : "", json_string(notes[i]).c_str());
  fprintf(f, "],\n\"modules\": [");
  first = true;
  for (const ModuleDesc *m : s.modules) {
    fprintf(f, "%s\n{\"id\": %s, \"manifest\": %s, \"sizes\": {", first ? "" : ",",
            json_string(m->id).c_str(), m->manifest);
    for (int i = 0; i < m->n_sizes; ++i)
      fprintf(f, "%s%s: %llu", i ? ", " : "", json_string(m->size_names[i]).c_str(),
              m->sizes[i]);
    fprintf(f, "}}");
    first = false;
  }
  fprintf(f, "],\n\"groups\": [");
  first = true;
  for (const std::string &key : s.group_order) {
    Group &g = s.groups[key];
    bool ran = false;  // a graph that was never launched ran none of its launches
    for (const LaunchRec &r : g.launches) ran = ran || r.runs;
    if (g.device_child) ran = !g.sink && g.grids_total > 0;  // grids launched from the device
    if (!ran) continue;
    fprintf(f, "%s\n{\"module\": %s, \"kernel\": %s, \"device\": %d, \"sm\": %s, \"why\": %s, ",
            first ? "" : ",", json_string(g.module->id).c_str(),
            json_string(g.kernel->name).c_str(), g.device, g.sm ? "true" : "false",
            json_string(g.why).c_str());
    if (g.device_child) fprintf(f, "\"device_grids\": %llu, ", g.grids_total);
    first = false;
    fprintf(f, "\"area_words\": %u, \"obj_counters\": %u, \"lr_offset\": %u, \"replicas\": %u, ",
            g.area_words, g.obj_counters, g.lr_offset, g.replicas);
    fprintf(f, "\"unknown_oor\": %llu, \"clock_records\": %llu,\n \"area\": %s,\n \"shared\": %s,",
            g.unknown_oor, g.clock_records, cw.entry(g.area).c_str(),
            cw.entry(g.shared).c_str());
    if (!g.site_max.empty()) fprintf(f, "\n \"site_max\": %s,", cw.entry(g.site_max).c_str());
    if (g.module->warps) fprintf(f, "\n \"warp_stats\": %s,", cw.entry(g.warp_stats).c_str());
    if (g.module->warps && (g.warp_shifts & ~1u))
      fprintf(f, "\n \"warp_shifts\": %u,", g.warp_shifts);  // launches sampled by block
    fprintf(f, "\n \"objects\": [");
    for (size_t i = 0; i < g.objects.size(); ++i) {
      ObjState &o = g.objects[i];
      fprintf(f, "%s\n  {\"slot\": %d, \"kind\": %d, \"param\": %d, \"unit\": %llu, \"elem\": %llu, "
              "\"base\": %llu, \"bytes\": %llu, \"offset\": %llu, \"n\": %llu, "
              "\"area_offset\": %u, \"lr_offset\": %u, \"known\": %s, \"oor\": %llu",
              i ? "," : "", o.slot, o.kind, o.param, o.unit, o.elem, o.base, o.bytes, o.offset,
              o.n, o.area_offset, o.lr_offset, o.known ? "true" : "false", o.oor);
      if (o.kind == OBJ_PARAM || o.kind == OBJ_GLOBAL) {
        // (a group is reported once harvested, which sized its sums)
        std::string e = o.packed.n == o.n ? cw.entry(o.packed) : "{\"dtype\": \"zero\", \"n\": " +
                        std::to_string(o.n) + "}";
        fprintf(f, ", \"counts\": %s", e.c_str());
      }
      fprintf(f, "}");
    }
    fprintf(f, "],\n \"launches\": [");
    bool first_launch = true;
    for (size_t i = 0; i < g.launches.size(); ++i) {
      LaunchRec &l = g.launches[i];
      if (!l.runs) continue;
      fprintf(f, "%s\n  {\"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"shared_mem\": %zu, "
              "\"ms\": %.6f, \"index\": %lld, \"oor\": %llu, \"params\": %s",
              first_launch ? "" : ",", l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
              l.block[2], l.shared_mem, l.captured ? l.ms : l.ms * (double)l.runs, l.index, l.oor,
              l.params.c_str());
      if (l.runs != 1) fprintf(f, ", \"repeat\": %llu", l.runs);  // a graph's launch, replayed
      fprintf(f, "}");
      first_launch = false;
    }
    fprintf(f, "]}");
  }
  fprintf(f, "],\n\"counts_file\": {\"name\": %s, \"id\": \"%s\", \"bytes\": %llu}}\n",
          json_string(counts::base_name(counts_path)).c_str(), id, cw.bytes());
  s.timing.written = cw.bytes();
  bool counts_ok = cw.ok() && fflush(cf) == 0;
  counts_ok = (fclose(cf) == 0) && counts_ok;
  bool ok = fflush(f) == 0;
  ok = (fclose(f) == 0) && ok;
  if (!counts_ok || rename(counts_tmp.c_str(), counts_path.c_str()) != 0) {
    fprintf(stderr, "gmprof: error: cannot write the report file %s: %s\n", counts_path.c_str(),
            strerror(errno));
    unlink(counts_tmp.c_str());
    unlink(tmp.c_str());
    return;
  }
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    fprintf(stderr, "gmprof: error: cannot write the report file %s: %s\n", path.c_str(),
            strerror(errno));
    unlink(tmp.c_str());
    return;
  }
  if (!s.options.quiet)
    fprintf(stderr, "gmprof: %lld launch(es) profiled; report written to %s (its counts in %s)\n",
            profiled, path.c_str(), counts_path.c_str());
}

// GMPROF_TIMING=1: the host runtime's seconds per phase and per kernel, on standard error
void print_timing(State &s) {
  const Timing &t = s.timing;
  fprintf(stderr,
          "gmprof timing: host runtime seconds: map %.6f, setup %.6f (%llu), fill %.6f (%llu, "
          "%llu waits), launch %.6f, fold %.6f, sync %.6f, read-back %.6f, sum %.6f, report "
          "%.6f; bytes zeroed %llu, folded on the device %llu, read back %llu, counts file "
          "%llu\n",
          t.map, t.setup, t.setups, t.fill, t.fills, t.waits, t.launch, t.fold, t.sync,
          t.readback, t.sum, t.report, t.zeroed, t.folded, t.copied, t.written);
  for (auto &kv : t.kernels)
    fprintf(stderr,
            "gmprof timing: kernel %s: %lld launch(es), %.6f s in the runtime, bytes folded on "
            "the device %llu, read back %llu\n",
            kv.first.c_str(), kv.second.launches, kv.second.seconds, kv.second.folded,
            kv.second.copied);
}

void at_exit() {
  if (state().refused) return;  // a bad option value (options.h refuse): no report
  state().exiting = true;
  const double t0 = now_s();
  write_report();
  State &s = state();
  s.timing.report += now_s() - t0;
  const char *v = getenv("GMPROF_TIMING");
  if (v && *v && strcmp(v, "0") != 0) print_timing(s);
}
