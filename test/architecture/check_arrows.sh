#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_arrows.sh [ROOT]: checks every quoted #include under ROOT/src against the Rooms table of
# ROOT/docs/architecture.md (| `src/ROOM/` | holds | may use |). Fails, naming file and line, when
# a file includes a room its row does not list, when a row uses a room that is not above it in the
# table (which is how the table stays free of circles), or when a folder of src/ has no row.
# Each room opens with a comment in one header, "// Room src/ROOM/: ... May use: ...", whose list
# must be the row's. src/main.cpp wires everything and may include any room.
set -u
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
doc=$root/docs/architecture.md
[ -f "$doc" ] || { echo "check_arrows: $doc not found"; exit 1; }
perl -e '
  use strict; use warnings; use File::Find;
  my ($root, $doc) = @ARGV;
  my (%uses, %order, @rows, @bad);
  open(my $d, "<", $doc) or die "check_arrows: $doc: $!\n";
  while (<$d>) {
    next unless /^\| `src\/([a-z_\/]+)\/` \|[^|]*\|([^|]*)\|/;
    my ($room, $cell) = ($1, $2);
    push @bad, "docs/architecture.md:$.: room src/$room/ has two rows" if exists $order{$room};
    my @u = ($cell =~ /`src\/([a-z_\/]+)\/`/g);
    for my $u (@u) {
      push @bad, "docs/architecture.md:$.: src/$room/ may use src/$u/, which is not a row above it"
        unless exists $order{$u};
    }
    $order{$room} = scalar @rows; push @rows, $room; $uses{$room} = { map { $_ => 1 } @u };
  }
  push @bad, "docs/architecture.md: no Rooms table rows found" unless @rows;
  my $files = 0;
  my %said;  # room -> [file, the rooms its "May use:" names]
  find({ no_chdir => 1, wanted => sub {
    return unless -f $_ && /\.(h|cpp)$/;
    my $rel = substr($_, length("$root/src/"));
    return if $rel eq "main.cpp";
    $files++;
    (my $room = $rel) =~ s{/[^/]+$}{};
    $room = "" if $room eq $rel;
    if (!exists $order{$room}) { push @bad, "src/$rel: its folder src/$room/ has no row in the Rooms table"; return; }
    open(my $f, "<", $_) or die "$_: $!\n";
    my $comment = "";
    while (my $line = <$f>) {
      if ($comment ne "" || $line =~ m{^// Room src/}) {
        if ($line =~ m{^// ?(.*)}) { $comment .= " $1" } else {
          if ($comment =~ m{Room src/([a-z_/]+)/:.*May use:(.*)}) {
            my ($r, $list) = ($1, $2);
            push @bad, "src/$rel: a second Room comment for src/$r/ (also in $said{$r}[0])" if $said{$r};
            push @bad, "src/$rel: its Room comment names src/$r/, but the file is in src/$room/" if $r ne $room;
            $said{$r} = [$rel, [sort ($list =~ m{src/([a-z_/]+)/}g)]];
          } else { push @bad, "src/$rel: a Room comment without \"May use:\"" }
          $comment = "";
        }
      }
      next unless $line =~ /^\s*#\s*include\s+"([^"]+)"/;
      my $inc = $1;
      (my $to = $inc) =~ s{/[^/]+$}{};
      $to = "" if $to eq $inc;
      next if $to eq $room;
      if (!exists $order{$to}) { push @bad, "src/$rel:$.: includes \"$inc\", which is in no room"; next; }
      push @bad, "src/$rel:$.: includes \"$inc\": src/$room/ may not use src/$to/ (docs/architecture.md, Rooms)"
        unless $uses{$room}{$to};
    }
  }}, "$root/src");
  push @bad, "check_arrows: no source file found under $root/src" unless $files;
  for my $r (@rows) {
    if (!$said{$r}) { push @bad, "src/$r/: no header opens with \"// Room src/$r/: ... May use: ...\""; next }
    my $want = join(", ", sort keys %{$uses{$r}});
    my $got = join(", ", @{$said{$r}[1]});
    push @bad, "src/$said{$r}[0]: its Room comment says src/$r/ may use ($got), the table says ($want)"
      if $want ne $got;
  }
  if (@bad) { print "$_\n" for @bad; exit 1 }
  printf "check_arrows: %d files, %d rooms, every include follows the table\n", $files, scalar @rows;
' "$root" "$doc"
