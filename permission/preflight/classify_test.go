package preflight

import (
	"fmt"
	"strings"
	"testing"
)

// destructiveCases are flagged, each with the category a user would expect.
var destructiveCases = []struct {
	cmd string
	cat Category
}{
	{"rm -rf /", CategoryDestructivePath},
	{"rm -rf /*", CategoryDestructivePath},
	{"rm -rf ~", CategoryDestructivePath},
	{"rm -rf ~/", CategoryDestructivePath},
	{`rm -rf "$HOME"`, CategoryDestructivePath},
	{"rm -rf ${HOME}/*", CategoryDestructivePath},
	{"rm -r /", CategoryDestructivePath},
	{"rm -r ~", CategoryDestructivePath},
	{"rm -R /etc", CategoryDestructivePath},
	{"rm --recursive /usr/*", CategoryDestructivePath},
	{"rm -fr node_modules", CategoryDestructivePath},
	{"rm -Rf build dist", CategoryDestructivePath},
	{"rm -r -f ./tmp", CategoryDestructivePath},
	{"rm --recursive --force x", CategoryDestructivePath},
	{"rm -rfv --no-preserve-root /", CategoryDestructivePath},
	{"rm -r /./", CategoryDestructivePath},
	{"rm -r //", CategoryDestructivePath},
	{"rm -r /usr/..", CategoryDestructivePath},
	{"/bin/rm -rf /", CategoryDestructivePath},
	{`\rm -rf /`, CategoryDestructivePath},
	{`"rm" -rf /`, CategoryDestructivePath},
	{"rm -r -- /", CategoryDestructivePath},
	{"cd /tmp && rm -rf ~", CategoryDestructivePath},
	{"ls; rm -rf /", CategoryDestructivePath},
	{"true || rm -rf /", CategoryDestructivePath},
	{"echo $(rm -rf ~)", CategoryDestructivePath},
	{"cat <(rm -rf /)", CategoryDestructivePath},
	{"if true; then rm -rf /; fi", CategoryDestructivePath},
	{"for d in a b; do rm -rf $d; done", CategoryDestructivePath},
	{"find . -name '*.o' -exec rm -rf {} +", CategoryDestructivePath},
	{"find / -delete", CategoryDestructivePath},
	{"find ~ -type f -delete", CategoryDestructivePath},
	{"git push --force", CategoryDataLoss},
	{"git push -f origin main", CategoryDataLoss},
	{"git push -fu origin main", CategoryDataLoss},
	{"git push --force-with-lease", CategoryDataLoss},
	{"git push --force-with-lease=main:abc origin", CategoryDataLoss},
	{"git push origin +main", CategoryDataLoss},
	{"git push origin +refs/heads/x:refs/heads/x", CategoryDataLoss},
	{"git push origin --delete feature", CategoryDataLoss},
	{"git push origin :feature", CategoryDataLoss},
	{"git push --mirror backup", CategoryDataLoss},
	{"git -C repo push -f", CategoryDataLoss},
	{"git -c core.x=1 push --force", CategoryDataLoss},
	{"git reset --hard", CategoryDataLoss},
	{"git reset --hard HEAD~3", CategoryDataLoss},
	{"git clean -fd", CategoryDataLoss},
	{"git clean -xdf", CategoryDataLoss},
	{"git clean --force", CategoryDataLoss},
	{"git branch -D feature", CategoryDataLoss},
	{"git branch --delete --force feature", CategoryDataLoss},
	{"mkfs.ext4 /dev/sdb1", CategorySystem},
	{"mkfs -t xfs /dev/nvme0n1", CategorySystem},
	{"mke2fs /dev/sdc", CategorySystem},
	{"shred -u secrets.txt", CategoryDataLoss},
	{"wipefs -a /dev/sda", CategorySystem},
	{"dd if=/dev/zero of=/dev/sda bs=1M", CategorySystem},
	{"dd if=image.iso of=/dev/disk2", CategorySystem},
	{"dd of=/dev/nvme0n1 if=x", CategorySystem},
	{"cat image > /dev/sda", CategorySystem},
	{"echo x > /dev/sda", CategorySystem},
	{"> /dev/sda", CategorySystem},
	{"cat x | tee /dev/sdb", CategorySystem},
	{"shutdown -h now", CategorySystem},
	{"shutdown -r +5", CategorySystem},
	{"reboot", CategorySystem},
	{"halt", CategorySystem},
	{"poweroff", CategorySystem},
	{"init 0", CategorySystem},
	{"init 6", CategorySystem},
	{"telinit 6", CategorySystem},
	{"systemctl poweroff", CategorySystem},
	{"systemctl reboot", CategorySystem},
	{"systemctl --force reboot", CategorySystem},
	{"kill -9 -1", CategorySystem},
	{`psql -c "DROP TABLE users"`, CategoryDataLoss},
	{`psql -h db -U app -c 'drop database prod;'`, CategoryDataLoss},
	{`mysql -e "TRUNCATE TABLE orders"`, CategoryDataLoss},
	{`mysql prod -e "truncate orders"`, CategoryDataLoss},
	{`sqlite3 app.db "DROP TABLE t"`, CategoryDataLoss},
	{`echo "DROP TABLE users;" | psql prod`, CategoryDataLoss},
	{"psql prod <<EOF\nDROP SCHEMA public CASCADE;\nEOF", CategoryDataLoss},
	{`redis-cli FLUSHALL`, CategoryDataLoss},
	{`mongosh --eval "db.dropDatabase()"`, CategoryDataLoss},
	{`psql -c "DELETE FROM users;"`, CategoryDataLoss},
	{"terraform destroy", CategoryCloud},
	{"terraform destroy -auto-approve", CategoryCloud},
	{"terraform -chdir=infra destroy", CategoryCloud},
	{"terraform apply", CategoryCloud},
	{"terraform apply -auto-approve", CategoryCloud},
	{"terraform apply -auto-approve plan.tfplan", CategoryCloud},
	{"terraform apply -var env=prod", CategoryCloud},
	{"terraform apply -destroy plan.out", CategoryCloud},
	{"tofu apply", CategoryCloud},
	{"terragrunt run-all destroy", CategoryCloud},
	{"aws ec2 terminate-instances --instance-ids i-123", CategoryCloud},
	{"aws s3 rm s3://bucket/key", CategoryCloud},
	{"aws s3 rm --recursive s3://bucket", CategoryCloud},
	{"aws s3 rb s3://bucket --force", CategoryCloud},
	{"aws --region us-east-1 rds delete-db-instance --db-instance-identifier x", CategoryCloud},
	{"aws iam remove-user-from-group --user-name a --group-name b", CategoryCloud},
	{"aws --profile prod s3api delete-bucket --bucket b", CategoryCloud},
	{"aws s3 sync . s3://b --delete", CategoryCloud},
	{"gcloud compute instances delete vm-1 --zone us-central1-a", CategoryCloud},
	{"gcloud projects delete my-project", CategoryCloud},
	{"az group delete -n rg --yes", CategoryCloud},
	{"az vm delete --name x -g rg", CategoryCloud},
	{"doctl compute droplet delete 123", CategoryCloud},
	{"doctl compute droplet rm 123", CategoryCloud},
	{"hcloud server delete web", CategoryCloud},
	{"gsutil rm -r gs://b", CategoryCloud},
	{"pulumi destroy --yes", CategoryCloud},
	{"kubectl delete pod x", CategoryCloud},
	{"kubectl -n prod delete deployment web", CategoryCloud},
	{"kubectl delete -f app.yaml", CategoryCloud},
	{"kubectl delete ns prod --dry-run=none", CategoryCloud},
	{"kubectl apply -f dir --prune -l app=x", CategoryCloud},
	{"kubectl apply --prune=true -f x", CategoryCloud},
	{"kubectl drain node-1", CategoryCloud},
	{"helm uninstall web", CategoryCloud},
	{"wrangler delete", CategoryCloud},
	{"wrangler rollback", CategoryCloud},
	{"wrangler r2 bucket delete b", CategoryCloud},
	{"npx wrangler delete --name w", CategoryCloud},
	{`wrangler d1 execute db --command "DROP TABLE x"`, CategoryDataLoss},
	{`ssh vyos "configure; set firewall x; commit; save"`, CategoryCloud},
	{`ssh -p 22 admin@junos 'configure; set x; commit and-quit'`, CategoryCloud},
	{"ssh router <<EOF\nconfigure\nset x\ncommit\nEOF", CategoryCloud},
	{`ssh host "rm -rf /"`, CategoryDestructivePath},
	{"curl -X DELETE https://api.cloudflare.com/client/v4/zones/1", CategoryCloud},
	{"curl -XDELETE https://api.digitalocean.com/v2/droplets/1", CategoryCloud},
	{"curl --request=PATCH https://compute.googleapis.com/x", CategoryCloud},
	{"curl -s -H 'Authorization: x' -d '{}' https://api.runpod.io/graphql", CategoryCloud},
	{"curl -X POST https://ec2.us-east-1.amazonaws.com/?Action=TerminateInstances", CategoryCloud},
	{"curl --json '{}' https://management.azure.com/subscriptions/x", CategoryCloud},
	{"curl -X PUT -T f https://eu.api.ovh.com/1.0/x", CategoryCloud},
	{"curl -k -X DELETE https://10.0.0.1:6443/api/v1/namespaces/prod", CategoryCloud},
	{"wget --method=DELETE https://api.hetzner.cloud/v1/servers/1", CategoryCloud},
	{"http DELETE https://api.linode.com/v4/x", CategoryCloud},
	{"chmod -R 777 /", CategoryDestructivePath},
	{"chmod -R 000 ~", CategoryDestructivePath},
	{"chown -R nobody /", CategoryDestructivePath},
	{"chown -R user:user /etc", CategoryDestructivePath},
	{"chgrp -R staff /usr", CategoryDestructivePath},
	{"env -S 'rm -rf /'", CategoryDestructivePath},
	{`$'\x72\x6d' -rf /`, CategoryDestructivePath},
	{"r''m -rf /", CategoryDestructivePath},
	{"cd / && rm -r *", CategoryDestructivePath},
	{"cd ~ && rm -r .", CategoryDestructivePath},
	{"cd; rm -r ./*", CategoryDestructivePath},
	{"rm -r ~root", CategoryDestructivePath},
	{"xargs -I{} rm -rf {}", CategoryDestructivePath},
	{"busybox rm -rf /", CategoryDestructivePath},
	{"sudo A=1 rm -rf /", CategoryDestructivePath},
	{"sudo -u root HOME=/ LANG=C git reset --hard", CategoryDataLoss},
	{"pkexec pkexec pkexec pkexec pkexec pkexec rm -rf /", CategoryDestructivePath},
	{"npx --yes wrangler delete", CategoryCloud},
	{"pnpm dlx wrangler rollback", CategoryCloud},
	{"command -p rm -rf /", CategoryDestructivePath},
	{"time -p nice -n 5 ionice -c3 rm -rf /", CategoryDestructivePath},
	{"flock /tmp/lock rm -rf /", CategoryDestructivePath},
	{`find / -exec rm -rf {} \;`, CategoryDestructivePath},
	{"sudo -u admin -g wheel -- git push -f", CategoryDataLoss},
	{"doas -u root sh -c 'kubectl delete ns prod'", CategoryCloud},
	{":(){ :|:& };:", CategoryForkBomb},
	{"bomb() { bomb | bomb & }; bomb", CategoryForkBomb},
	{"function f { f & f; }; f", CategoryForkBomb},
	{"airlock approvals allow req_1", CategorySelfApproval},
	{"airlock approvals allow req_1 --always", CategorySelfApproval},
	{"/usr/local/bin/airlock authorize /", CategorySelfApproval},
	{"airlock places add ~", CategorySelfApproval},
	{"airlock grants revoke g_1", CategorySelfApproval},
	{"airlock ops approve plan_1", CategorySelfApproval},
	{"airlock config set approval_policy never", CategorySelfApproval},
	{"airlock secret get AWS_KEY", CategorySelfApproval},
	{"echo 'approval_policy = \"never\"' >> ~/.config/airlock/config.toml", CategorySelfApproval},
	{"sed -i s/user/auto_review/ ~/.config/airlock/config.toml", CategorySelfApproval},
	{`sqlite3 ~/.local/share/airlock/airlock.db "update permission_pending set status='answered'"`, CategorySelfApproval},
	{"cp evil.toml $XDG_CONFIG_HOME/airlock/config.toml", CategorySelfApproval},
	{"rm $AIRLOCK_HOME/airlock.db", CategorySelfApproval},
	{"curl --unix-socket /run/user/1000/airlock/airlock.sock -X POST http://x/approvals/1/allow", CategorySelfApproval},
	{"socat - UNIX-CONNECT:/run/user/1000/airlock/airlock.sock", CategorySelfApproval},
	{"secret-tool store --label x service airlock", CategorySelfApproval},
	{"secret-tool lookup service airlock", CategorySelfApproval},
	{"security add-generic-password -s airlock -a x -w y", CategorySelfApproval},
	{"gdbus call --session --dest org.freedesktop.secrets --object-path /x", CategorySelfApproval},
	{"dbus-send --session --dest=org.kde.StatusNotifierItem-1-1 /MenuBar x", CategorySelfApproval},
	{"xdotool key Return", CategorySelfApproval},
	{`python3 -c "import os; os.system('airlock approvals allow r1')"`, CategorySelfApproval},
	{`python3 -c 'import subprocess; subprocess.run(["airlock", "approvals", "allow", "r"])'`, CategorySelfApproval},
	// Uncommitted work, stashes and history.
	{"git checkout -- .", CategoryDataLoss},
	{"git checkout .", CategoryDataLoss},
	{"git checkout HEAD -- src/main.go", CategoryDataLoss},
	{"git checkout -f main", CategoryDataLoss},
	{"git restore .", CategoryDataLoss},
	{"git restore --worktree --staged src", CategoryDataLoss},
	{"git switch --discard-changes main", CategoryDataLoss},
	{"git stash drop", CategoryDataLoss},
	{"git stash clear", CategoryDataLoss},
	{"git filter-branch --tree-filter 'rm -f x' HEAD", CategoryDataLoss},
	{"git reflog expire --expire=now --all", CategoryDataLoss},
	{"git gc --prune=now", CategoryDataLoss},
	{"git -C repo checkout -- .", CategoryDataLoss},
	// Deleting through other programs.
	{`find . -name "*.pyc" -delete`, CategoryDataLoss},
	{"find src -type f -mtime +3 -delete", CategoryDataLoss},
	{"rsync -a --delete src/ dst/", CategoryDataLoss},
	{"rsync -av --remove-source-files a/ b/", CategoryDataLoss},
	{"truncate -s 0 app.db", CategoryDataLoss},
	{"crontab -r", CategoryDataLoss},
	{"docker system prune -af", CategoryDataLoss},
	{"docker volume rm pgdata", CategoryDataLoss},
	{"podman volume prune -f", CategoryDataLoss},
	{"gh repo delete me/project --yes", CategoryCloud},
	{"iptables -F", CategorySystem},
	{"nft flush ruleset", CategorySystem},
	{`python3 -c 'import shutil; shutil.rmtree("/home/u/project")'`, CategoryDataLoss},
	{`node -e 'require("fs").rmSync("dist", {recursive: true, force: true})'`, CategoryDataLoss},
	{`ruby -e 'require "fileutils"; FileUtils.rm_rf("tmp")'`, CategoryDataLoss},
	{`python3 -c "import os; os.system('rm -rf ~')"`, CategoryDestructivePath},
	{`python -c "import subprocess; subprocess.run('git push --force', shell=True)"`, CategoryDataLoss},
	{`perl -e 'system("git reset --hard")'`, CategoryDataLoss},
}

// lookalikes mention dangerous words but are not dangerous.
var lookalikes = []string{
	"echo rm -rf /",
	`echo "rm -rf /"`,
	`grep "rm -rf" notes.md`,
	`grep -r "DROP TABLE" migrations/`,
	`printf '%s\n' "git push --force"`,
	"dd if=/dev/zero of=disk.img bs=1M count=10",
	"dd if=x of=/dev/null",
	"git push",
	"git push origin main",
	"git push -u origin feature",
	"git push --tags",
	"git reset --soft HEAD~1",
	"git reset HEAD file",
	"git clean -n",
	"git clean -fn",
	"git clean --dry-run -f",
	"git branch -d merged",
	"git branch feature",
	"git status",
	"git log --oneline",
	"git commit -m 'commit and push'",
	"rm -r build",
	"rm -r ./dist",
	"rm file.txt",
	"rm -f file.txt",
	"rm -i -r tmp",
	"rmdir /tmp/x",
	"kubectl delete --dry-run=client -f x.yaml",
	"kubectl delete pod x --dry-run=server",
	"kubectl get pods",
	"kubectl apply -f app.yaml",
	"kubectl describe deployment delete-me",
	"terraform plan",
	"terraform plan -destroy -out plan",
	"terraform apply plan.tfplan",
	"terraform apply -var-file prod.tfvars plan.out",
	"terraform init",
	"aws s3 ls s3://bucket",
	"aws ec2 describe-instances",
	"aws s3 rm s3://bucket/key --dry-run",
	"aws ec2 terminate-instances --instance-ids i-1 --dry-run",
	"aws s3 cp a s3://b/a",
	"gcloud compute instances list",
	"az vm list",
	"doctl compute droplet list",
	"wrangler deploy",
	"wrangler dev",
	"ssh host uptime",
	`ssh vyos "configure; set x; commit-confirm 5"`,
	`ssh junos 'configure; set x; commit confirmed 5'`,
	`ssh host "cd repo && git commit -m fix"`,
	"curl https://api.cloudflare.com/client/v4/zones",
	"curl -X GET https://api.digitalocean.com/v2/droplets",
	"curl -X DELETE https://example.com/items/1",
	"curl -d x=1 https://httpbin.org/post",
	"curl -G -d q=1 https://compute.googleapis.com/x",
	"chmod -R 755 ./build",
	"chmod 644 file",
	"chown -R me ./src",
	"echo ':(){ :|:& };:'",
	"f() { echo hi; }; f",
	"shutdown -c",
	"systemctl status nginx",
	"systemctl restart nginx",
	"init --version",
	"kill -9 1234",
	"kill -1 1234",
	"psql -c 'SELECT * FROM users'",
	`psql -c "DELETE FROM users WHERE id = 1"`,
	"mysql -e 'show tables'",
	"cat drop_table.sql",
	"sqlite3 app.db .tables",
	"mkdir -p /tmp/mkfs",
	"echo mkfs.ext4",
	"man shred",
	"which reboot",
	"find . -name '*.go'",
	"find . -exec grep -l x {} +",
	"airlock approvals list",
	"airlock approvals list --json",
	"airlock grants list",
	"airlock check --json -- ls",
	"airlock exec -- make",
	"airlock ops plan",
	"airlock approvals --help",
	"cat ~/.config/airlock/config.toml",
	"grep approval_policy ~/.config/airlock/config.toml",
	"ls ~/.local/share/airlock",
	"echo airlock approvals allow",
	"python3 -c 'print(1)'",
	"helm list",
	"helm uninstall web --dry-run",
	"npx prettier --write .",
	"xargs -0 echo",
	"command -v rm",
	"type rm",
	"alias rm='rm -i'",
	"cd / && ls",
	"cd /tmp/build && rm -r out",
	"cd ~/project && rm -r dist",
	"git checkout -b feature",
	"git checkout main",
	"git restore --staged src/main.go",
	"git stash",
	"git stash pop",
	"git gc",
	"find . -name -delete -print",
	`find . -exec echo -delete \; -print`,
	"rsync -a src/ dst/",
	"rsync -an --delete src/ dst/",
	"truncate -s 10M disk.img",
	"crontab -l",
	"docker ps -a",
	"docker volume ls",
	"gh repo view",
	"iptables -L",
	`python3 -c 'print(1)'`,
	`python3 -c "import os; print(os.getcwd())"`,
	`node -e 'console.log("rm -rf /")'`,
}

// wrappers run their command; %s is replaced by the command (or appended).
var wrappers = []string{
	"%s",
	"sudo %s",
	"sudo -u root %s",
	"sudo -E -u deploy -- %s",
	"doas %s",
	"doas -u root %s",
	"env %s",
	"env -i PATH=/usr/bin %s",
	"env -u HOME X=1 %s",
	"command %s",
	"nohup %s",
	"time %s",
	"time -p %s",
	"timeout 10 %s",
	"timeout -s KILL -k 5 30s %s",
	"nice -n 10 %s",
	"ionice -c 3 %s",
	"setsid %s",
	"stdbuf -oL %s",
	"exec %s",
	"sh -c '%s'",
	"bash -c '%s'",
	"bash -lc '%s'",
	"eval '%s'",
	"sudo bash -c '%s'",
	"timeout 5 sh -c 'nice %s'",
	"bash -c \"bash -c '%s'\"",
	"pkexec %s",
	"su root -c '%s'",
	"watch -n 5 %s",
}

func TestClassifyDestructive(t *testing.T) {
	for _, tc := range destructiveCases {
		t.Run(tc.cmd, func(t *testing.T) {
			fs := Classify(tc.cmd)
			if !hasCategory(fs, tc.cat) {
				t.Fatalf("Classify(%q) = %+v, want a %s finding", tc.cmd, fs, tc.cat)
			}
			for _, f := range fs {
				if f.Reason == "" {
					t.Fatalf("finding without a reason: %+v", f)
				}
			}
		})
	}
}

func TestClassifyLookalikes(t *testing.T) {
	for _, cmd := range lookalikes {
		t.Run(cmd, func(t *testing.T) {
			if fs := Classify(cmd); len(fs) != 0 {
				t.Fatalf("Classify(%q) = %+v, want nothing", cmd, fs)
			}
		})
	}
}

// wrapped applies a wrapper to a command.
func wrapped(w, cmd string) string { return fmt.Sprintf(w, cmd) }

// wrappable reports whether a case can be put inside single quotes and after a
// wrapper (no quotes, no compound syntax, a simple command).
func wrappable(cmd string) bool {
	return !strings.ContainsAny(cmd, "'\"\n;|&<>(){}$\\") && !strings.HasPrefix(cmd, "if ") && !strings.HasPrefix(cmd, "for ")
}

func TestClassifyThroughWrappers(t *testing.T) {
	n := 0
	for _, w := range wrappers {
		for _, tc := range destructiveCases {
			if !wrappable(tc.cmd) {
				continue
			}
			cmd := wrapped(w, tc.cmd)
			n++
			if fs := Classify(cmd); !hasCategory(fs, tc.cat) {
				t.Errorf("Classify(%q) = %+v, want a %s finding", cmd, fs, tc.cat)
			}
		}
		for _, l := range lookalikes {
			if !wrappable(l) {
				continue
			}
			cmd := wrapped(w, l)
			n++
			if fs := Classify(cmd); len(fs) != 0 {
				t.Errorf("Classify(%q) = %+v, want nothing", cmd, fs)
			}
		}
	}
	t.Logf("%d wrapped cases", n)
}

func hasCategory(fs []Finding, c Category) bool {
	for _, f := range fs {
		if f.Category == c {
			return true
		}
	}
	return false
}
